// idem.js: idempotency keys for forms sent with fetch. No dependencies, no
// build step. A key is minted when the form is shown (or read from the
// server-rendered hidden field) and kept in sessionStorage per form and per
// content version: a double click, a second submit or a reload of the tab
// sends the same key, an edited form a new one. Retries (network errors,
// 409, 503) keep the key; a final answer drops it. idem.d.ts documents the API.

const day = 24 * 3600 * 1000;
const defaults = {
  field: "idempotency_key", // the server-rendered key's hidden field
  retryOn: [409, 503],
  attempts: 8,
  baseDelay: 500,
  maxDelay: 8000,
  lifetime: day, // the kit's default retention (Maintenance.Keep)
};
const inFlight = new Map();
const shown = new WeakMap();
const memory = new Map();

// formatKey writes key as the RFC 8941 sf-string the Idempotency-Key
// header carries: "…", with \ and " escaped.
export function formatKey(key) {
  if (typeof key !== "string" || !/^[\x20-\x7e]{1,255}$/.test(key)) {
    throw new TypeError("idem: a key is 1 to 255 printable ASCII characters");
  }
  return '"' + key.replace(/[\\"]/g, "\\$&") + '"';
}

// retryAfter reads a Retry-After value (seconds or an HTTP date) as
// milliseconds from now, or null.
export function retryAfter(value, now = Date.now()) {
  if (value == null || value === "") return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

// version names a form's content: a hash of its fields but the key's, so
// the same content has the same version and any edit another one.
export function version(entries, field = defaults.field) {
  let h1 = 0x811c9dc5, h2 = 0x01000193;
  for (const [name, value] of entries) {
    if (name === field) continue;
    const s = name + "=" + (typeof value === "string" ? value : value.name + ":" + value.size) + "&";
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    }
  }
  return (h1 >>> 0).toString(36) + (h2 >>> 0).toString(36);
}

function storage() {
  try {
    const s = globalThis.sessionStorage;
    if (s) return s;
  } catch {
    // Storage refused (a sandboxed frame, some private modes): the keys
    // then live as long as the page.
  }
  return {
    getItem: (k) => (memory.has(k) ? memory.get(k) : null),
    setItem: (k, v) => memory.set(k, String(v)),
    removeItem: (k) => memory.delete(k),
  };
}

// mint makes a key of 128 random bits. Not crypto.randomUUID, which a page
// served over plain HTTP (not localhost) lacks.
function mint() {
  const b = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

// Keys is the store of one form's keys: key(version) gives the key for that
// content, the same until drop(version) after a final answer, or until it
// is too old for the server to remember it.
export class Keys {
  constructor(name, options = {}) {
    this.name = name;
    this.lifetime = options.lifetime ?? defaults.lifetime;
    this.storage = options.storage ?? storage();
    this.first = options.first ?? null; // the key minted when the form was shown
  }
  slot(v) {
    return "idem:" + this.name + ":" + v;
  }
  entry(v, now = Date.now()) {
    let e = null;
    try {
      e = JSON.parse(this.storage.getItem(this.slot(v)));
    } catch {
      // A damaged entry is no entry.
    }
    if (e && typeof e.key === "string" && now - e.minted < this.lifetime) return e;
    const first = this.first;
    e = { key: first ? first.key : mint(), minted: first ? first.minted : now };
    this.first = null; // the form's first key serves one version only
    this.storage.setItem(this.slot(v), JSON.stringify(e));
    return e;
  }
  key(v) {
    return this.entry(v).key;
  }
  drop(v) {
    this.storage.removeItem(this.slot(v));
  }
}

function sleep(ms, signal, wakeOnline) {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
      if (wakeOnline) globalThis.removeEventListener?.("online", done);
      resolve();
    };
    const abort = () => {
      done();
      reject(signal.reason);
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", abort);
    // Back online: the connection that failed may work now.
    if (wakeOnline) globalThis.addEventListener?.("online", done);
  });
}

// send fetches url with the key in Idempotency-Key, retrying network
// errors and the statuses in retryOn with the same key, and returns the
// answer; see idem.d.ts.
export async function send(url, init = {}, options = {}) {
  const o = { ...defaults, ...options };
  const minted = o.minted ?? Date.now();
  const headers = new Headers(init.headers);
  headers.set("Idempotency-Key", formatKey(o.key));
  // Stop early enough that the last attempt reaches the server while it
  // still remembers the key: past its lifetime the key is a new operation.
  const deadline = minted + o.lifetime - Math.min(60000, o.lifetime / 20);
  for (let attempt = 1; ; attempt++) {
    let response = null, error = null;
    try {
      response = await fetch(url, { ...init, headers, signal: o.signal });
    } catch (e) {
      if (o.signal?.aborted) throw e;
      error = e;
    }
    if (response && !o.retryOn.includes(response.status)) {
      return {
        response,
        key: o.key,
        replayed: response.headers.get("Idempotent-Replayed") === "true",
        attempts: attempt,
        // 2xx and 4xx are the server's word on this key: a retry gets
        // the same, so the key is done. A 5xx leaves the outcome open.
        final: response.status < 500,
      };
    }
    const after = response && retryAfter(response.headers.get("Retry-After"));
    const backoff = Math.random() * Math.min(o.maxDelay, o.baseDelay * 2 ** (attempt - 1));
    // Retry-After is honoured, with a little jitter so that clients told
    // the same second do not all come back in it.
    const wait = after != null ? after + Math.random() * Math.min(1000, after / 10) : backoff;
    if (attempt >= o.attempts || Date.now() + wait > deadline) {
      if (error) throw error;
      return { response, key: o.key, replayed: false, attempts: attempt, final: false };
    }
    o.onRetry?.({ attempt, wait, status: response ? response.status : 0, error });
    await sleep(wait, o.signal, !!error);
  }
}

// action is the form's action as a URL. Not form.action, nor form.id
// below: a field named "action" or "id" would stand in their place.
function action(form) {
  return new URL(form.getAttribute("action") || "", location.href);
}

function formName(form) {
  return form.getAttribute("id") || form.getAttribute("name") || action(form).pathname;
}

function firstKey(form, o) {
  let first = shown.get(form);
  if (!first) {
    const input = form.elements.namedItem(o.field);
    first = { key: input?.value || mint(), minted: Date.now(), server: !!input?.value };
    shown.set(form, first);
  }
  return first;
}

// submit sends form's content once per content version: see idem.d.ts.
export function submit(form, options = {}) {
  const o = { ...defaults, ...options };
  const data = o.submitter ? new FormData(form, o.submitter) : new FormData(form);
  const name = o.name ?? formName(form);
  const v = version(data, o.field);
  const first = firstKey(form, o);
  const slot = name + ":" + v;
  if (inFlight.has(slot)) return inFlight.get(slot);
  // A key the server rendered is the server's: it was minted for this
  // form, and the server judges what was changed under it.
  const keys = new Keys(name, { lifetime: o.lifetime, storage: o.storage });
  const entry = first.server ? first : (() => {
    if (!first.used) keys.first = first;
    first.used = true;
    return keys.entry(v);
  })();
  const headers = new Headers(o.headers);
  let body = new URLSearchParams(data);
  if (o.encode === "json") {
    data.delete(o.field);
    body = asJSON(form, data);
    headers.set("Content-Type", "application/json");
  } else if (o.encode) {
    body = o.encode(data);
  }
  const url = o.url ?? action(form);
  const method = o.method ?? (form.getAttribute("method") || "post").toUpperCase();
  const p = send(url, { method, body, headers, credentials: o.credentials ?? "same-origin" },
    { ...o, key: entry.key, minted: entry.minted })
    .then((answer) => {
      if (answer.final && !first.server) keys.drop(v);
      return answer;
    })
    .finally(() => inFlight.delete(slot));
  inFlight.set(slot, p);
  return p;
}

// enhance sends form through submit when it is submitted, and mints its
// first key now, when it is shown: see idem.d.ts.
export function enhance(form, options = {}) {
  const o = { ...defaults, ...options };
  firstKey(form, o);
  let last = null;
  const onSubmit = (event) => {
    event.preventDefault();
    const p = submit(form, { ...o, submitter: event.submitter });
    if (p === last) return; // the same submission, still on its way
    last = p;
    o.onSubmit?.(p);
    p.then((answer) => o.onAnswer?.(answer), (error) => o.onError?.(error));
  };
  form.addEventListener("submit", onSubmit);
  return () => form.removeEventListener("submit", onSubmit);
}

// asJSON is a form's fields as a JSON object, numbers from inputs of type
// number: the body of encode: "json".
function asJSON(form, data) {
  const out = {};
  for (const [name, value] of data) {
    const input = form.elements.namedItem(name);
    out[name] = input?.type === "number" && value !== "" ? Number(value) : value;
  }
  return JSON.stringify(out);
}
