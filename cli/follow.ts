// Following one object until it reaches a state: a GET, then a watch on just that object
// (fieldSelector metadata.name) from the GET's resourceVersion; a watch that ends or fails
// is resumed with a fresh GET, so nothing between the two is missed.
import {
  classifyApiError,
  type KubeApiError,
  type KubeClient,
  type KubeObjectLike,
  type ResourceRef,
  type WatchHandle,
} from '../shared/kube/client.ts';
import { CliError } from './io.ts';

export interface FollowOptions<T extends KubeObjectLike, R> {
  client: KubeClient;
  ref: ResourceRef & { name: string };
  /** The awaited result, or undefined to keep following. Called for every version seen. */
  until: (object: T) => R | undefined;
  /** Every version seen (before `until` is asked), for progress. */
  onObject?: (object: T) => void;
  timeoutMs: number;
  /** How long a single watch request lasts before it is resumed (the server's timeoutSeconds). */
  watchSeconds?: number;
  /** Pause before resuming a watch that failed. */
  retryMs?: number;
  /** Stops following early, as the timeout does (`done: false` with the last version seen). */
  signal?: AbortSignal;
}

export type FollowResult<T, R> = { done: true; result: R; object: T } | { done: false; last?: T };

/** Follows `ref` until `until` returns something, or `timeoutMs` passes (`done: false`). */
export async function follow<T extends KubeObjectLike, R>(options: FollowOptions<T, R>): Promise<FollowResult<T, R>> {
  const { client, ref } = options;
  const deadline = Date.now() + options.timeoutMs;
  const collection = await client.pathFor({ apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.namespace });
  let last: T | undefined;

  const see = (object: T): R | undefined => {
    last = object;
    options.onObject?.(object);
    return options.until(object);
  };
  const missing = () => new CliError(`${ref.kind} "${ref.name}" not found in namespace "${ref.namespace ?? ''}"`);

  const stopped = () => options.signal?.aborted === true;
  while (Date.now() < deadline && !stopped()) {
    const object = await client.get<T>(ref);
    if (!object) throw missing();
    const found = see(object);
    if (found !== undefined) return { done: true, result: found, object };

    const remaining = deadline - Date.now();
    if (remaining <= 0 || stopped()) break;
    const outcome = await new Promise<{ result?: R; object?: T; error?: CliError; failed?: boolean }>((resolve) => {
      let handle: WatchHandle | undefined = undefined;
      const timer = setTimeout(() => {
        handle?.stop();
        resolve({});
      }, remaining);
      const end = (value: { result?: R; object?: T; error?: CliError; failed?: boolean }) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        handle?.stop();
        resolve(value);
      };
      const onAbort = () => end({});
      options.signal?.addEventListener('abort', onAbort, { once: true });
      handle = client.watch(
        collection,
        {
          fieldSelector: `metadata.name=${ref.name}`,
          resourceVersion: object.metadata.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: Math.max(1, Math.min(options.watchSeconds ?? 300, Math.ceil(remaining / 1000))),
        },
        (event) => {
          if (event.type === 'ERROR') return end({ failed: true });
          if (event.type === 'BOOKMARK') return;
          if (event.type === 'DELETED') return end({ error: missing() });
          const seen = event.object as T;
          const result = see(seen);
          if (result !== undefined) end({ result, object: seen });
        },
        (err?: KubeApiError) => end({ failed: err !== undefined && classifyApiError(err) !== 'gone' }),
      );
    });
    if (outcome.error) throw outcome.error;
    if (outcome.result !== undefined) return { done: true, result: outcome.result, object: outcome.object! };
    if (outcome.failed) await sleep(Math.min(options.retryMs ?? 1000, Math.max(0, deadline - Date.now())));
  }
  return { done: false, last };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
