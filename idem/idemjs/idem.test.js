// Unit tests of idem.js with Node's test runner (node --test), against a
// real HTTP server on loopback: each test scripts the server's answers and
// reads what the module sent. The browser's side (forms, sessionStorage,
// a reload, going offline) is tested in Chromium: the shop's
// internal/browsertest/idemjs_test.go.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { webcrypto } from "node:crypto";
import { formatKey, retryAfter, version, Keys, send } from "./idem.js";

// Node 18 (Debian 12's) has Web Crypto, but not as a global.
globalThis.crypto ??= webcrypto;

// serve answers the i-th request with answers[i] (the last one repeats):
// [status, headers] or "drop" to close the connection unanswered. It
// returns the server's URL and the requests' Idempotency-Key headers, with
// the time each arrived.
async function serve(t, answers) {
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push({ key: req.headers["idempotency-key"], at: Date.now() });
    const a = answers[Math.min(seen.length, answers.length) - 1];
    if (a === "drop") {
      req.socket.destroy();
      return;
    }
    res.writeHead(a[0], { "Content-Type": "application/json", ...a[1] });
    res.end(JSON.stringify({ n: seen.length }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  return { url: "http://127.0.0.1:" + server.address().port + "/api", seen };
}

const quick = { baseDelay: 5, maxDelay: 20 };

test("the key is an RFC 8941 sf-string", () => {
  assert.equal(formatKey("a1-b2"), '"a1-b2"');
  assert.equal(formatKey('say "hi" \\ bye'), '"say \\"hi\\" \\\\ bye"');
  for (const bad of ["", "é", "a\nb", "x".repeat(256), 42]) {
    assert.throws(() => formatKey(bad), TypeError, `key ${JSON.stringify(bad)}`);
  }
});

test("Retry-After in seconds or as a date", () => {
  const now = Date.parse("2026-12-06T17:00:00Z");
  assert.equal(retryAfter("2", now), 2000);
  assert.equal(retryAfter("Sun, 06 Dec 2026 17:00:03 GMT", now), 3000);
  assert.equal(retryAfter("Sun, 06 Dec 2026 16:00:00 GMT", now), 0);
  assert.equal(retryAfter(null, now), null);
  assert.equal(retryAfter("soon", now), null);
});

test("the version changes with the content and not with the key", () => {
  const a = version([["friend", "Ada"], ["amount", "20"], ["idempotency_key", "k1"]]);
  assert.equal(a, version([["friend", "Ada"], ["amount", "20"], ["idempotency_key", "k2"]]));
  assert.notEqual(a, version([["friend", "Ada"], ["amount", "21"]]));
  assert.notEqual(version([["a", "b=c"]]), version([["a", "b"], ["c", ""]]));
});

function memoryStorage() {
  const m = new Map();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => m.set(k, v), removeItem: (k) => m.delete(k), m };
}

test("one key per form and content version, until dropped", () => {
  const storage = memoryStorage();
  const keys = new Keys("send", { storage, first: { key: "shown", minted: Date.now() } });
  assert.equal(keys.key("v1"), "shown", "the first version takes the key minted when the form was shown");
  assert.equal(keys.key("v1"), "shown", "a second submit");
  // A reload: a new Keys on the same storage.
  const again = new Keys("send", { storage, first: { key: "shown-after-reload", minted: Date.now() } });
  assert.equal(again.key("v1"), "shown", "the reloaded tab");
  assert.equal(again.key("v2"), "shown-after-reload", "an edited form takes the reloaded form's unused key");
  assert.match(again.key("v3"), /^[0-9a-f]{32}$/, "edited again: a key minted");
  assert.equal(new Keys("other", { storage }).key("v1") === "shown", false, "another form");
  again.drop("v1");
  assert.notEqual(again.key("v1"), "shown", "after a final answer");
});

test("a key older than the server's lifetime is not reused", () => {
  const storage = memoryStorage();
  storage.setItem("idem:send:v1", JSON.stringify({ key: "old", minted: Date.now() - 2000 }));
  assert.equal(new Keys("send", { storage, lifetime: 5000 }).key("v1"), "old");
  assert.notEqual(new Keys("send", { storage, lifetime: 1000 }).key("v1"), "old");
});

test("an answer is handed back with Idempotent-Replayed", async (t) => {
  const s = await serve(t, [[201, { "Idempotent-Replayed": "true" }]]);
  const a = await send(s.url, { method: "POST", body: "{}" }, { key: "k-1" });
  assert.equal(a.response.status, 201);
  assert.equal(a.replayed, true);
  assert.equal(a.final, true);
  assert.deepEqual(await a.response.json(), { n: 1 });
  assert.deepEqual(s.seen.map((r) => r.key), ['"k-1"']);
});

test("network errors, 409 and 503 are retried with the same key", async (t) => {
  const s = await serve(t, ["drop", [409, { "Retry-After": "0" }], [503, {}], [201, {}]]);
  const retries = [];
  const a = await send(s.url, { method: "POST" }, { ...quick, key: "k-2", onRetry: (r) => retries.push(r.status) });
  assert.equal(a.response.status, 201);
  assert.equal(a.attempts, 4);
  assert.equal(a.replayed, false);
  assert.deepEqual(s.seen.map((r) => r.key), ['"k-2"', '"k-2"', '"k-2"', '"k-2"']);
  assert.deepEqual(retries, [0, 409, 503]);
});

test("Retry-After is waited for", async (t) => {
  const s = await serve(t, [[409, { "Retry-After": "1" }], [200, {}]]);
  await send(s.url, { method: "POST" }, { ...quick, key: "k-3" });
  const waited = s.seen[1].at - s.seen[0].at;
  assert.ok(waited >= 1000 && waited < 1500, `waited ${waited} ms, want 1 s and a little jitter`);
});

test("a 422 or another refusal is not retried", async (t) => {
  for (const status of [400, 401, 403, 404, 422, 429]) {
    const s = await serve(t, [[status, { "Retry-After": "0" }], [201, {}]]);
    const a = await send(s.url, { method: "POST" }, { ...quick, key: "k-4" });
    assert.equal(a.response.status, status);
    assert.equal(a.final, true, `${status} is the server's word on the key`);
    assert.equal(s.seen.length, 1, `${status}: got ${s.seen.length} requests, want 1`);
  }
});

test("a 500 is handed back, and leaves the outcome open", async (t) => {
  const s = await serve(t, [[500, {}], [201, {}]]);
  const a = await send(s.url, { method: "POST" }, { ...quick, key: "k-5" });
  assert.equal(a.response.status, 500);
  assert.equal(a.final, false, "the key must be kept: the write may have happened");
  assert.equal(s.seen.length, 1);
});

test("retries end after the attempts, with the last answer or error", async (t) => {
  const busy = await serve(t, [[503, { "Retry-After": "0" }]]);
  const a = await send(busy.url, { method: "POST" }, { ...quick, key: "k-6", attempts: 3 });
  assert.equal(a.response.status, 503);
  assert.equal(a.final, false);
  assert.equal(busy.seen.length, 3);

  const down = await serve(t, ["drop"]);
  await assert.rejects(send(down.url, { method: "POST" }, { ...quick, key: "k-6", attempts: 3 }), TypeError);
  assert.equal(down.seen.length, 3);
});

test("no retry is sent past the key's lifetime", async (t) => {
  const s = await serve(t, [[409, { "Retry-After": "3" }], [201, {}]]);
  // Minted 9 s ago with a 10 s lifetime: a retry in 3 s would come after
  // the server forgot the key.
  const a = await send(s.url, { method: "POST" }, { ...quick, key: "k-7", minted: Date.now() - 9000, lifetime: 10000 });
  assert.equal(a.response.status, 409);
  assert.equal(a.final, false);
  assert.equal(s.seen.length, 1);
});

test("an AbortSignal stops the wait between attempts", async (t) => {
  const s = await serve(t, [[503, { "Retry-After": "5" }]]);
  const abort = new AbortController();
  setTimeout(() => abort.abort(new Error("left the page")), 100);
  const started = Date.now();
  await assert.rejects(send(s.url, { method: "POST" }, { key: "k-8", signal: abort.signal }), /left the page/);
  assert.ok(Date.now() - started < 2000, "aborted at once");
  assert.equal(s.seen.length, 1);
});
