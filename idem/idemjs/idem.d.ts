// Type declarations of idem.js: idempotency keys for forms sent with fetch.

/** What send and submit hand back once the server has answered. */
export interface Answer {
  /** The server's last answer. */
  response: Response;
  /** The key the request carried, the same on every attempt. */
  key: string;
  /** The answer carried `Idempotent-Replayed: true`: a retry was answered with the first request's answer. */
  replayed: boolean;
  /** How many requests were sent. */
  attempts: number;
  /**
   * The answer is the server's word on the key (2xx, or a 4xx refusal such as 422): the key is
   * dropped, and the next submit of the form gets a new one. False for a 5xx, or a 409 or 503
   * still there when the retries ran out: the outcome is open, and the key is kept, so that
   * sending the same content again is safe.
   */
  final: boolean;
}

/** A retry about to be sent, for the page to say so. */
export interface Retry {
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Milliseconds until the next one. */
  wait: number;
  /** The status that is retried (409, 503), or 0 for a network error. */
  status: number;
  /** The network error, or null. */
  error: unknown;
}

export interface SendOptions {
  /** Statuses retried with the same key. Default [409, 503]; every other answer is handed back. */
  retryOn?: number[];
  /** Requests sent at most, the first included. Default 8. */
  attempts?: number;
  /** Backoff without Retry-After: a random wait up to baseDelay × 2^(attempt−1), capped at maxDelay. Defaults 500 and 8000 ms. */
  baseDelay?: number;
  maxDelay?: number;
  /**
   * How long the server remembers a key, in ms (the idem kit: Maintenance.Keep, 24 h by default).
   * No retry is sent later than this (less a margin of 5 %, at most a minute) after the key was
   * minted, and a stored key that old is replaced: past it, the server would take the key for a new
   * operation. Default 24 h.
   */
  lifetime?: number;
  /** Stops the request in flight and the wait between attempts; the promise rejects with its reason. */
  signal?: AbortSignal;
  /** Called before each retry. */
  onRetry?: (retry: Retry) => void;
}

/**
 * Fetches url with `Idempotency-Key` set to key (as an RFC 8941 sf-string), retrying network errors
 * and the statuses in retryOn with the same key: after Retry-After when the answer has one (plus a
 * little jitter), else after a capped backoff with full jitter; a network error's wait ends early
 * when the browser comes back online. Rejects with the last network error when the attempts run
 * out on one.
 */
export function send(
  url: string | URL,
  init?: RequestInit,
  options?: SendOptions & { key: string; minted?: number },
): Promise<Answer>;

export interface SubmitOptions extends SendOptions {
  /** The hidden field of a server-rendered key. Default "idempotency_key". */
  field?: string;
  /** Names the form's keys in sessionStorage. Default the form's id, its name, or its action's path. */
  name?: string;
  /** Where to send it. Default the form's action and method. */
  url?: string | URL;
  method?: string;
  /** Headers sent with it (an Authorization, say). */
  headers?: HeadersInit;
  /** Whether cookies go with it. Default "same-origin"; "include" for an API on another origin that takes them. */
  credentials?: RequestCredentials;
  /**
   * The body: "json" for a JSON object of the fields (numbers from inputs of type number; the key
   * field left out), or a function of the form's FormData. Default the fields as a form sends them
   * (application/x-www-form-urlencoded).
   */
  encode?: "json" | ((data: FormData) => BodyInit);
  /** The button that submitted the form, whose name and value are sent. */
  submitter?: HTMLElement | null;
}

/**
 * Sends the form's content with its key. The key: the one the server rendered in the hidden field,
 * if there is one; else the one kept in sessionStorage for this form and this content (the key
 * minted when the form was shown serves the first content sent). The same content sent again while
 * its request is on its way gets that request's promise, not a second request; once a final answer
 * arrives the key is dropped.
 */
export function submit(form: HTMLFormElement, options?: SubmitOptions): Promise<Answer>;

export interface EnhanceOptions extends SubmitOptions {
  /** Called with each submission's promise when it starts (not again for a double click). */
  onSubmit?: (answer: Promise<Answer>) => void;
  onAnswer?: (answer: Answer) => void;
  onError?: (error: unknown) => void;
}

/**
 * Mints the form's first key now, when it is shown (or takes the server-rendered one), and sends
 * the form through submit on each submit event. Returns a function that stops.
 */
export function enhance(form: HTMLFormElement, options?: EnhanceOptions): () => void;

/** The key as the `Idempotency-Key` header carries it: `"…"`, with `\` and `"` escaped. Throws a TypeError for a key that is not 1 to 255 printable ASCII characters. */
export function formatKey(key: string): string;

/** A Retry-After value (seconds, or an HTTP date) as milliseconds from now, or null. */
export function retryAfter(value: string | null, now?: number): number | null;

/** A short hash of a form's fields but the key field: the same for the same content. */
export function version(entries: Iterable<[string, FormDataEntryValue]>, field?: string): string;

/** The keys of one form, one per content version, in sessionStorage (or in memory when refused). */
export class Keys {
  constructor(
    name: string,
    options?: { lifetime?: number; storage?: Pick<Storage, "getItem" | "setItem" | "removeItem">; first?: { key: string; minted: number } },
  );
  /** The key for this version: the stored one, else first, else a new one (stored). */
  key(version: string): string;
  /** Forgets the version's key, after a final answer. */
  drop(version: string): void;
}
