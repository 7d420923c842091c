// Toggle (KUDO): a boolean parameter decides the side — true applies the task's resources
// exactly as an Apply task does (server-side apply, then health), false deletes them as a
// Delete task does (gone once every read says 404). Both sides run as the Instance's
// ServiceAccount through the Apply and Delete executors themselves; a value that is not
// "true" or "false" fails the task for good (the apply-time preflight refuses it first).
import { toggleSide } from '../../shared/plan/toggle.ts';
import { ApplyExecutor } from './apply.ts';
import { TenantExecutor, type ExecutionContext, type ExecutorDeps, type Observation } from './context.ts';
import { DeleteExecutor } from './delete.ts';

export class ToggleExecutor extends TenantExecutor {
  private readonly apply: ApplyExecutor;
  private readonly remove: DeleteExecutor;

  constructor(deps: ExecutorDeps) {
    super(deps);
    this.apply = new ApplyExecutor(deps);
    this.remove = new DeleteExecutor(deps);
  }

  async execute(ctx: ExecutionContext): Promise<Observation> {
    const side = toggleSide(ctx.task, ctx.parameters);
    if ('error' in side) return { kind: 'fatalError', message: side.error };
    const observation = await (side.side === 'apply' ? this.apply : this.remove).execute(ctx);
    const label = `${ctx.task.spec?.parameter}=${side.side === 'apply' ? 'true' : 'false'}`;
    return { ...observation, message: `toggle ${label}: ${observation.message ?? (side.side === 'apply' ? 'applied' : 'deleted')}` };
  }
}
