// A real SMTP server on loopback for the email channel's tests (npm `smtp-server`, the
// nodemailer project's server): plain, STARTTLS or implicit TLS with a throwaway certificate
// made by openssl, optional login, scripted refusals, and every message kept whole so a test
// reads what a mail client would. `waitFor(n)` resolves on the n-th message: no sleeps.
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { join } from "node:path";

/** One message the sink accepted. */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw message (headers and body), CRLF line ends. */
  raw: string;
  /** The session was under TLS when DATA was sent. */
  secure: boolean;
  /** Logged-in user, if any. */
  user: string | null;
}

/** How the sink behaves. */
export interface SmtpSinkOptions {
  /** none: plain only; starttls: offers STARTTLS; implicit: TLS from the first byte. */
  tls: "none" | "starttls" | "implicit";
  /** PEM key and certificate (from {@linkcode makeCertificate}) when tls is not none. */
  cert?: { key: string; cert: string };
  /** Require this login. */
  login?: { user: string; pass: string };
  /** Reply codes for the first DATA commands, in order (then 250). */
  dataReplies?: number[];
}

/** A running sink. */
export interface SmtpSink {
  host: string;
  port: number;
  received: ReceivedMail[];
  /** Failed logins seen. */
  badLogins: number;
  waitFor(count: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** Whether openssl is installed (the TLS cases need a certificate). */
export async function haveOpenssl(): Promise<boolean> {
  try {
    const r = await new Deno.Command("openssl", { args: ["version"], stdout: "null" }).output();
    return r.success;
  } catch {
    return false;
  }
}

/** A self-signed certificate for 127.0.0.1 and localhost, valid for two days. */
export async function makeCertificate(dir: string): Promise<{ key: string; cert: string }> {
  const key = join(dir, "smtp.key");
  const cert = join(dir, "smtp.crt");
  const r = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!r.success) throw new Error(new TextDecoder().decode(r.stderr));
  return { key: await Deno.readTextFile(key), cert: await Deno.readTextFile(cert) };
}

/** Starts a sink on 127.0.0.1 (a free port). */
export async function startSmtpSink(options: SmtpSinkOptions): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const waiters: { count: number; resolve: (r: ReceivedMail[]) => void }[] = [];
  const replies = [...(options.dataReplies ?? [])];
  const sink = { badLogins: 0 };
  const config: SMTPServerOptions = {
    secure: options.tls === "implicit",
    hideSTARTTLS: options.tls === "none",
    disabledCommands: options.tls === "none" ? ["STARTTLS"] : [],
    ...(options.cert ? { key: options.cert.key, cert: options.cert.cert } : {}),
    authOptional: options.login === undefined,
    allowInsecureAuth: false,
    logger: false,
    onAuth(auth, _session, callback) {
      const login = options.login;
      if (login && auth.username === login.user && auth.password === login.pass) {
        callback(null, { user: auth.username });
      } else {
        sink.badLogins++;
        callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
      }
    },
    onData(stream, session, callback) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (c: Uint8Array) => chunks.push(c));
      stream.on("end", () => {
        const code = replies.shift();
        if (code !== undefined && code !== 250) {
          callback(Object.assign(new Error(`scripted ${code}`), { responseCode: code }));
          return;
        }
        const total = chunks.reduce((n, c) => n + c.length, 0);
        const bytes = new Uint8Array(total);
        let at = 0;
        for (const c of chunks) {
          bytes.set(c, at);
          at += c.length;
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: new TextDecoder().decode(bytes),
          secure: session.secure,
          user: typeof session.user === "string" ? session.user : null,
        });
        for (const w of waiters.filter((w) => received.length >= w.count)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve([...received]);
        }
        callback(null, "queued by the test sink");
      });
    },
  };
  const server = new SMTPServer(config);
  server.on("error", () => {}); // a client dropping the session is part of some tests
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    host: "127.0.0.1",
    port,
    received,
    get badLogins() {
      return sink.badLogins;
    },
    waitFor(count) {
      if (received.length >= count) return Promise.resolve([...received]);
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The decoded text body of a plain-text message (quoted-printable or 7bit). */
export function mailBody(raw: string): string {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split);
  const body = raw.slice(split + 4);
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(head)) return body;
  return new TextDecoder().decode(
    Uint8Array.from(
      body.replace(/=\r\n/g, "").replace(
        /=([0-9A-F]{2})/g,
        (_, h) => String.fromCharCode(parseInt(h, 16)),
      ).split("").map((c) => c.charCodeAt(0)),
    ),
  );
}

/** A header's unfolded value (the first one of that name). */
export function mailHeader(raw: string, name: string): string | undefined {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n")).replace(/\r\n[ \t]+/g, " ");
  for (const line of head.split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0 && line.slice(0, at).toLowerCase() === name.toLowerCase()) {
      return line.slice(at + 1).trim();
    }
  }
  return undefined;
}
