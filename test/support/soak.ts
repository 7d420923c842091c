// Scale of the reliability tests: the fast variant runs in `npm test`; PLANWARDEN_SOAK=1
// (`npm run test:soak`) runs the long one, ten times the cases, kills and restarts.
export const SOAK = process.env.PLANWARDEN_SOAK === '1' || process.env.PLANWARDEN_SOAK === 'true';

/** `fast` in the fast variant, `fast * factor` under PLANWARDEN_SOAK. */
export function scaled(fast: number, factor = 10): number {
  return SOAK ? fast * factor : fast;
}

/** One of two values, by variant. */
export function bySoak<T>(fast: T, soak: T): T {
  return SOAK ? soak : fast;
}
