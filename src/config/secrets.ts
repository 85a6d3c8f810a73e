// Configuration values that may hold a secret: the storage URLs can carry a password, and a
// chat webhook's path is its credential. Every place that prints configuration (`config get`,
// `config list`) shows them through here.

/** Keys whose values are engine URLs that may carry a password. */
export const SECRET_URL_KEYS: readonly string[] = ["storage.database_url", "storage.redis_url"];

/** Webhook URLs: their path and query are shown as `…` (Slack's and Discord's hold the key). */
export const SECRET_PATH_KEYS: readonly string[] = ["notify.webhook_url", "notify.webhook.url"];

/** Every key whose value is shown redacted. */
export const SECRET_KEYS: readonly string[] = [...SECRET_URL_KEYS, ...SECRET_PATH_KEYS];

/** A URL as scheme, host and port, its path and query replaced by `…`. */
export function redactUrlPath(text: string): string {
  try {
    const url = new URL(text);
    const bare = url.pathname === "/" && url.search === "" && url.hash === "";
    return `${url.protocol}//${url.host}/${bare ? "" : "…"}`;
  } catch {
    return "(not a URL)";
  }
}

/** A URL with its password (if any) replaced by `***`; text that is no URL is left alone. */
export function redactUrlPassword(text: string): string {
  try {
    const url = new URL(text);
    if (url.password === "") return text;
    url.password = "***";
    return url.href;
  } catch {
    // Not a URL the parser accepts: still hide anything shaped like `//user:password@`.
    return text.replace(/(\/\/[^:/@\s]*):[^@\s]*@/g, "$1:***@");
  }
}

/** The value of `key` as it may be shown: secret-bearing URLs without their password. */
export function shownConfigValue(key: string, value: unknown): unknown {
  if (typeof value === "string" && SECRET_URL_KEYS.includes(key)) return redactUrlPassword(value);
  if (typeof value === "string" && SECRET_PATH_KEYS.includes(key)) return redactUrlPath(value);
  return value;
}
