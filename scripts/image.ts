// `npm run image`: builds planwarden's container image from the Dockerfile without any
// container registry — bases made from Debian's packages, podman to build — and prints its
// ref and size. Cached: a second run with the same sources builds nothing
// (test/controlplane/image.ts says how).
import { ensureImage, ensureTools, ImageError, podmanProblem } from '../test/controlplane/image.ts';

function main(): number {
  const log = (s: string) => console.log(s);
  const problem = ensureTools(log) ?? podmanProblem();
  if (problem) {
    console.error(`error: ${problem}`);
    return 1;
  }
  try {
    const image = ensureImage({ log });
    console.log(image.ref);
    return 0;
  } catch (e) {
    if (!(e instanceof ImageError)) throw e;
    console.error(`error: ${e.message}`);
    return 1;
  }
}

process.exit(main());
