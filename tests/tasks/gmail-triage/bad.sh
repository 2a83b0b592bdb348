#!/usr/bin/env bash
# The failing agent of gmail-triage/task.md. Its mistake: it sends Dave's answer (messages.send
# in his thread) instead of leaving a draft for the lead to review; the rest is good.sh's.
#
# Must fail (expect-bad-fail):
#   A draft addressed to dave@example.com exists
#   At least three drafts exist
#   No mail was sent
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_GMAIL_REST_URL:?run me with pome run}" "${POME_GMAIL_MCP_URL:?}"

me=$(gm GET /profile | jq -er .emailAddress)
header() { jq -r --arg h "$2" '.payload.headers[] | select(.name | ascii_downcase == ($h | ascii_downcase)) | .value' <<<"$1" | head -1; }
find_unread() { # FROM: the unread message from FROM, in metadata format
        local id
        id=$(gm GET "/messages?q=$(jq -rn --arg q "is:unread from:$1" '$q | @uri')" | jq -er '.messages[0].id')
        gm GET "/messages/$id?format=metadata&metadataHeaders=From&metadataHeaders=Subject&metadataHeaders=Message-ID"
}
modify() { # ID ADD_JSON REMOVE_JSON
        gm POST "/messages/$1/modify" "$(jq -nc --argjson a "$2" --argjson r "$3" '{addLabelIds: $a, removeLabelIds: $r}')" >/dev/null
}
follow_up=$(gm GET /labels | jq -er '.labels[] | select(.name == "Follow Up") | .id')

# 1. Carol: Follow Up, read, and a draft reply in her thread, over MCP
carol=$(find_unread carol@northwind.example)
modify "$(jq -r .id <<<"$carol")" "[\"$follow_up\"]" '["UNREAD"]'
out=$(mcp "$POME_GMAIL_MCP_URL" create_draft "$(jq -nc --arg m "$(jq -r .id <<<"$carol")" --arg s "Re: $(header "$carol" Subject)" \
        '{to: ["carol@northwind.example"], subject: $s, replyToMessageId: $m,
          body: "Hi Carol, thanks for the report. We are investigating the checkout errors now and will update you within the hour. -- Acme Support"}')")
[[ $(jq -r '.isError // false' <<<"$out") == false ]] || { echo "create_draft: $out" >&2; exit 1; }
echo "drafted a reply to Carol in thread $(jq -r '.structuredContent.threadId' <<<"$out")"

# 2. Dave: answered straight away
dave=$(find_unread dave@example.com)
raw=$(gm_raw "$me" dave@example.com "Re: $(header "$dave" Subject)" \
        "Hi Dave, sorry the blender arrived broken. Your refund request for order #1182 is with a manager for approval; we will get back to you shortly." \
        "$(header "$dave" Message-ID)")
gm POST /messages/send "$(jq -nc --arg r "$raw" --arg t "$(jq -r .threadId <<<"$dave")" '{raw: $r, threadId: $t}')" >/dev/null
modify "$(jq -r .id <<<"$dave")" '[]' '["UNREAD"]'
echo "answered Dave"

# 3. the invoice: a Billing label, out of the inbox
billing=$(gm POST /labels '{"name":"Billing","labelListVisibility":"labelShow","messageListVisibility":"show"}' | jq -er .id)
invoice=$(find_unread billing@cloudhost.example)
modify "$(jq -r .id <<<"$invoice")" "[\"$billing\"]" '["INBOX","UNREAD"]'
echo "filed the invoice under Billing ($billing)"
