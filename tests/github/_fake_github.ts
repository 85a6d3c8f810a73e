// A fake GitHub REST API on loopback for the sync and comment tests: repositories with
// issues (and pull requests, which the issues endpoint also lists), pagination by `Link`,
// a token that must match, scripted answers served before the normal ones (rate limits,
// errors, hostile links), and every request recorded with its Authorization header.

/** One issue (or pull request) of the fake. */
export interface FakeIssue {
  number: number;
  title: string;
  body?: string | null;
  labels?: string[];
  state?: "open" | "closed";
  pull?: boolean;
}

/** One request the fake received. */
export interface FakeRequest {
  method: string;
  path: string;
  query: string;
  auth: string | null;
  body: unknown;
}

/** A scripted answer, served before the normal ones (in order). */
export interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A running fake. */
export interface FakeGitHub {
  /** API root (`http://127.0.0.1:PORT/api/v3`). */
  apiUrl: string;
  /** Issues by `owner/name`. */
  repos: Map<string, FakeIssue[]>;
  /** Requests, in order. */
  requests: FakeRequest[];
  /** Comments posted: repo, issue number, body. */
  comments: { repo: string; number: number; body: string }[];
  /** Answers served before the normal ones. */
  script: Scripted[];
  /** Issues per page (GitHub: per_page up to 100; smaller here to exercise pagination). */
  pageSize: number;
  /** Overrides the origin of `Link: rel="next"` URLs (a hostile API). */
  nextOrigin?: string;
  /** Resolves once `count` comments were posted. */
  waitForComments(count: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a fake that accepts `token` (requests without Authorization see public repos). */
export function startFakeGitHub(token: string): FakeGitHub {
  const commentWaiters: { count: number; resolve: () => void }[] = [];
  const fake: Omit<FakeGitHub, "apiUrl" | "close"> & { nextOrigin?: string } = {
    repos: new Map(),
    requests: [],
    comments: [],
    script: [],
    pageSize: 100,
    waitForComments(count) {
      if (this.comments.length >= count) return Promise.resolve();
      return new Promise((resolve) => commentWaiters.push({ count, resolve }));
    },
  };
  const json = (value: unknown, status = 200, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(value), {
      status,
      headers: { "content-type": "application/json", ...headers },
    });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = await req.text();
    let body: unknown = null;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      body = text;
    }
    const auth = req.headers.get("authorization");
    fake.requests.push({ method: req.method, path: url.pathname, query: url.search, auth, body });
    const scripted = fake.script.shift();
    if (scripted !== undefined) {
      return new Response(scripted.body ?? JSON.stringify({ message: "scripted" }), {
        status: scripted.status,
        headers: { "content-type": "application/json", ...scripted.headers },
      });
    }
    if (auth !== null && auth !== `Bearer ${token}`) {
      return json({ message: "Bad credentials" }, 401);
    }
    const m = /^\/api\/v3\/repos\/([^/]+)\/([^/]+)\/issues(?:\/(\d+)(\/comments)?)?$/.exec(
      url.pathname,
    );
    const issues = m ? fake.repos.get(`${m[1]}/${m[2]}`) : undefined;
    if (!m || issues === undefined) return json({ message: "Not Found" }, 404);
    const view = (i: FakeIssue) => ({
      number: i.number,
      title: i.title,
      body: i.body ?? null,
      labels: (i.labels ?? []).map((name) => ({ name, color: "ededed" })),
      state: i.state ?? "open",
      html_url: `https://elsewhere.example/${i.number}`,
      ...(i.pull ? { pull_request: { url: "x" } } : {}),
    });
    if (m[3] === undefined) {
      const open = issues.filter((i) => (i.state ?? "open") === "open");
      const page = Number(url.searchParams.get("page") ?? "1");
      const size = Math.min(fake.pageSize, Number(url.searchParams.get("per_page") ?? "30"));
      const slice = open.slice((page - 1) * size, page * size);
      const headers: Record<string, string> = {};
      if (page * size < open.length) {
        const next = new URL(req.url);
        next.searchParams.set("page", String(page + 1));
        const origin = fake.nextOrigin ?? next.origin;
        headers.link = `<${origin}${next.pathname}${next.search}>; rel="next"`;
      }
      return json(slice.map(view), 200, headers);
    }
    const issue = issues.find((i) => i.number === Number(m[3]));
    if (issue === undefined) return json({ message: "Not Found" }, 404);
    if (m[4] === undefined) return json(view(issue));
    if (req.method !== "POST" || auth === null) return json({ message: "Requires auth" }, 401);
    fake.comments.push({
      repo: `${m[1]}/${m[2]}`,
      number: issue.number,
      body: String((body as { body?: unknown })?.body ?? ""),
    });
    for (const w of commentWaiters.filter((w) => fake.comments.length >= w.count)) {
      commentWaiters.splice(commentWaiters.indexOf(w), 1);
      w.resolve();
    }
    return json({ id: fake.comments.length }, 201);
  });
  const port = (server.addr as Deno.NetAddr).port;
  return Object.assign(fake, {
    apiUrl: `http://127.0.0.1:${port}/api/v3`,
    close: () => server.shutdown(),
  });
}
