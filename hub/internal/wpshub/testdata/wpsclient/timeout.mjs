// withTimeout fails a step of the SDK scripts that takes longer than
// stepTimeoutMs, so a hub that never answers fails the test instead of
// hanging it.
export const stepTimeoutMs = 5000;

export function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), stepTimeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
