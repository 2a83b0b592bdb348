// slack-go (Debian's golang-github-slack-go-slack-dev), unmodified, over a realistic flow
// against the Slack twin: auth, channels and their members, users, posting, threads,
// reactions, pins, edits, ephemeral messages, marks, files and search. Usage: slackflow
// BOT_TOKEN USER_TOKEN API_URL (ending in /api/): search, as on Slack, with the user token, and
// with the bot token refused. Prints one line per step ("ok  " or "FAIL") and "passed N";
// exits 1 when a step failed.
package main

import (
	"fmt"
	"os"

	"github.com/slack-go/slack"
)

var ok, failed int

func step(name string, f func() (interface{}, error)) {
	v, err := f()
	if err != nil {
		failed++
		fmt.Printf("FAIL %s %v\n", name, err)
		return
	}
	ok++
	s := fmt.Sprintf("%v", v)
	if len(s) > 80 {
		s = s[:80]
	}
	fmt.Printf("ok   %s %s\n", name, s)
}

func main() {
	api := slack.New(os.Args[1], slack.OptionAPIURL(os.Args[3]))
	user := slack.New(os.Args[2], slack.OptionAPIURL(os.Args[3]))
	var general, ts string
	step("AuthTest", func() (interface{}, error) { r, err := api.AuthTest(); return r.UserID, err })
	step("GetConversations", func() (interface{}, error) {
		chs, _, err := api.GetConversations(&slack.GetConversationsParameters{Limit: 100})
		for _, c := range chs {
			if c.Name == "general" {
				general = c.ID
			}
		}
		return len(chs), err
	})
	step("GetConversationInfo", func() (interface{}, error) {
		c, err := api.GetConversationInfo(general, false)
		if err != nil {
			return nil, err
		}
		return c.Name, nil
	})
	step("GetUsersInConversation", func() (interface{}, error) {
		m, _, err := api.GetUsersInConversation(&slack.GetUsersInConversationParameters{ChannelID: general})
		return len(m), err
	})
	step("GetUsers", func() (interface{}, error) { u, err := api.GetUsers(); return len(u), err })
	step("GetUserInfo", func() (interface{}, error) {
		u, err := api.GetUserInfo("U_ALICE")
		if err != nil {
			return nil, err
		}
		return u.RealName, nil
	})
	step("GetUserByEmail", func() (interface{}, error) {
		u, err := api.GetUserByEmail("alice@pome-twin.slack.com")
		if err != nil {
			return nil, err
		}
		return u.ID, nil
	})
	step("PostMessage", func() (interface{}, error) {
		_, t, err := api.PostMessage(general, slack.MsgOptionText("from slack-go", false))
		ts = t
		return t, err
	})
	step("PostMessage thread", func() (interface{}, error) {
		_, t, err := api.PostMessage(general, slack.MsgOptionText("a reply", false), slack.MsgOptionTS(ts))
		return t, err
	})
	step("GetConversationReplies", func() (interface{}, error) {
		m, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: general, Timestamp: ts})
		return len(m), err
	})
	step("GetConversationHistory", func() (interface{}, error) {
		h, err := api.GetConversationHistory(&slack.GetConversationHistoryParameters{ChannelID: general, Limit: 10})
		if err != nil {
			return nil, err
		}
		return len(h.Messages), nil
	})
	step("AddReaction", func() (interface{}, error) {
		return "", api.AddReaction("thumbsup", slack.NewRefToMessage(general, ts))
	})
	step("GetReactions", func() (interface{}, error) {
		r, err := api.GetReactions(slack.NewRefToMessage(general, ts), slack.NewGetReactionsParameters())
		return len(r), err
	})
	step("AddPin", func() (interface{}, error) { return "", api.AddPin(general, slack.NewRefToMessage(general, ts)) })
	step("ListPins", func() (interface{}, error) { p, _, err := api.ListPins(general); return len(p), err })
	step("UpdateMessage", func() (interface{}, error) {
		_, _, t, err := api.UpdateMessage(general, ts, slack.MsgOptionText("edited by slack-go", false))
		return t, err
	})
	step("PostEphemeral", func() (interface{}, error) {
		return api.PostEphemeral(general, "U_ALICE", slack.MsgOptionText("only alice", false))
	})
	step("MarkConversation", func() (interface{}, error) { return "", api.MarkConversation(general, ts) })
	step("SetTopicOfConversation", func() (interface{}, error) {
		c, err := api.SetTopicOfConversation(general, "slack-go topic")
		if err != nil {
			return nil, err
		}
		return c.Topic.Value, nil
	})
	step("CreateConversation", func() (interface{}, error) {
		c, err := api.CreateConversation("slack-go-room", false)
		if err != nil {
			return nil, err
		}
		return c.ID, nil
	})
	step("GetUserGroups", func() (interface{}, error) { g, err := api.GetUserGroups(); return len(g), err })
	step("GetTeamInfo", func() (interface{}, error) {
		t, err := api.GetTeamInfo()
		if err != nil {
			return nil, err
		}
		return t.Name, nil
	})
	step("GetEmoji", func() (interface{}, error) { e, err := api.GetEmoji(); return len(e), err })
	step("UploadFile", func() (interface{}, error) {
		f, err := api.UploadFile(slack.FileUploadParameters{Content: "hello", Filename: "hello.txt", Channels: []string{general}})
		if err != nil {
			return nil, err
		}
		return f.Name, nil
	})
	step("SearchMessages (user token)", func() (interface{}, error) {
		r, err := user.SearchMessages("slack-go", slack.NewSearchParameters())
		if err != nil {
			return nil, err
		}
		return r.Total, nil
	})
	step("SearchMessages (bot token): not_allowed_token_type", func() (interface{}, error) {
		_, err := api.SearchMessages("slack-go", slack.NewSearchParameters())
		if err == nil || err.Error() != "not_allowed_token_type" {
			return nil, fmt.Errorf("want not_allowed_token_type, got %v", err)
		}
		return err.Error(), nil
	})
	step("DeleteMessage", func() (interface{}, error) { _, t, err := api.DeleteMessage(general, ts); return t, err })
	fmt.Printf("passed %d\n", ok)
	if failed > 0 {
		os.Exit(1)
	}
}
