// UpdatePlan reservations: a Lease per (namespace, targetRelease) in planwarden's own
// namespace, created atomically by the webhook (exactly one create wins), released by the
// controller when the UpdatePlan goes away, reclaimed by the webhook when orphaned.
import { createHash } from 'node:crypto';

export const RESERVATION_LABEL = 'planwarden.dev/reservation';
export const HOLDER_NAMESPACE_ANNOTATION = 'planwarden.dev/holder-namespace';
export const HOLDER_ANNOTATION = 'planwarden.dev/holder';
export const HOLDER_UID_ANNOTATION = 'planwarden.dev/holder-uid';
export const TARGET_ANNOTATION = 'planwarden.dev/target-release';
/** A reservation younger than this may belong to a create still in flight. */
export const RESERVATION_GRACE_SECONDS = 30;

const RESERVATION_PREFIX = 'updateplan-';
const DNS_LABEL_MAX = 63;
const HASH_LENGTH = 10;

/**
 * The name of the object that reserves (namespace, targetRelease) for one UpdatePlan: a
 * DNS-1123 label of at most 63 characters, readable (`updateplan-<target>-<hash>`) and
 * unique through a hash of the exact namespace and target.
 */
export function reservationName(namespace: string, targetRelease: string): string {
  const hash = createHash('sha256').update(`${namespace}/${targetRelease}`).digest('hex').slice(0, HASH_LENGTH);
  const room = DNS_LABEL_MAX - RESERVATION_PREFIX.length - HASH_LENGTH - 1;
  const slug = targetRelease
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, room)
    .replace(/^-+|-+$/g, '')
    .replace(/-{2,}/g, '-');
  return slug === '' ? `${RESERVATION_PREFIX}${hash}` : `${RESERVATION_PREFIX}${slug}-${hash}`;
}

/**
 * Whether a reservation may be reclaimed: its holder does not exist and the reservation
 * is older than `graceSeconds` (a younger one may belong to a create still in flight, or
 * to a holder the caller's cache does not show yet). `holderExists` is the caller's
 * lookup — by `holderUid` when the reservation records one, else by (namespace,
 * targetRelease). An unreadable creationTimestamp counts as old.
 */
export function isReservationStale(
  reservation: { creationTimestamp: string; holderUid?: string },
  holderExists: boolean,
  now: string,
  graceSeconds = RESERVATION_GRACE_SECONDS,
): boolean {
  if (holderExists) return false;
  const age = Date.parse(now) - Date.parse(reservation.creationTimestamp);
  return Number.isNaN(age) || age >= graceSeconds * 1000;
}
