// Waiting in tests without assuming a fast machine: for a condition to hold (checked until it
// does) or a promise to settle, with a generous guard that turns a hang into a failure naming
// what never happened. The guard is not a timing assertion: it only stops a stuck test.

/** How long a wait may take before the test is considered stuck. */
export const HANG_GUARD_MS = 180_000;

/** `promise`, or a failure naming `what` if it has not settled within the hang guard. */
export async function guard<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`stuck waiting for ${what}`)), HANG_GUARD_MS);
  });
  try {
    return await Promise.race([promise, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

/** Checks `probe` until it returns something other than undefined; returns that. */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + HANG_GUARD_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`stuck waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
