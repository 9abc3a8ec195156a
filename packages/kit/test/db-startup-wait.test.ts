import { describe, expect, it } from "vitest";
import { untilDatabaseAnswers } from "../src/db/startup-wait.js";

const withCode = (code: string, message = `pg ${code}`) => Object.assign(new Error(message), { code });

/** An attempt that always fails with `err`, counting its calls. */
function alwaysFailingWith(err: Error): (() => Promise<never>) & { calls: number } {
  const attempt = Object.assign(
    async (): Promise<never> => {
      attempt.calls++;
      throw err;
    },
    { calls: 0 },
  );
  return attempt;
}

/** A fake clock whose sleep moves it, so the backoff is observed without waiting. */
function fakeTime() {
  let t = 0;
  const slept: number[] = [];
  return { now: () => t, sleep: async (ms: number) => void (slept.push(ms), (t += ms)), slept };
}

describe("untilDatabaseAnswers (a process's database at start)", () => {
  it("tries again while the server refuses connections or is unreachable, backing off, then answers", async () => {
    const time = fakeTime();
    const failures = [withCode("53300", "sorry, too many clients already"), withCode("ECONNREFUSED"), withCode("57P03", "the database system is starting up")];
    const retried: number[] = [];
    const answer = await untilDatabaseAnswers(
      async () => {
        const f = failures.shift();
        if (f) throw f;
        return "open";
      },
      { waitMs: 60_000, ...time, onRetry: (_err, attempt) => retried.push(attempt) },
    );
    expect(answer).toBe("open");
    expect(retried).toEqual([1, 2, 3]);
    expect(time.slept).toEqual([250, 500, 1_000]);
  });

  it("fails at once on anything but a connection failure (a wrong password, a failed migration)", async () => {
    const time = fakeTime();
    const wrongPassword = withCode("28P01", "password authentication failed for user \"corridor\"");
    const attempt = alwaysFailingWith(wrongPassword);
    await expect(untilDatabaseAnswers(attempt, { waitMs: 60_000, ...time })).rejects.toBe(wrongPassword);
    expect(attempt.calls).toBe(1);
    expect(time.slept).toEqual([]);
  });

  it("gives up with the last failure once the wait is over, never sleeping past it", async () => {
    const time = fakeTime();
    const refused = withCode("53300", "sorry, too many clients already");
    const attempt = alwaysFailingWith(refused);
    await expect(untilDatabaseAnswers(attempt, { waitMs: 10_000, ...time })).rejects.toBe(refused);
    // 250 + 500 + 1000 + 2000 + 4000 = 7750; the next 5000 would pass 10 s.
    expect(time.slept).toEqual([250, 500, 1_000, 2_000, 4_000]);
    expect(attempt.calls).toBe(6);
  });
});
