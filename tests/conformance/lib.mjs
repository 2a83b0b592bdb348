// Shared by the conformance scripts: pomed's control API, as run.sh hands it over
// (POME_API_URL, POME_API_KEY).
import assert from "node:assert/strict";

export const api = process.env.POME_API_URL;
export const key = process.env.POME_API_KEY;

// One control API call: {status, body (parsed JSON or null)}.
export async function control(method, path, body) {
  const res = await fetch(api + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

// Discards sandbox sid, confirming with the discard token when pomed asks for one.
export async function discard(sid) {
  let r = await control("DELETE", `/v1/sandboxes/${sid}`);
  if (r.status === 409)
    r = await control("DELETE", `/v1/sandboxes/${sid}?confirm_discard=${r.body.error.details.discard_token}`);
  assert.equal(r.status, 204);
}
