import type { Caller } from '../../access/caller.js';
import type { Mailer } from '../../mail/index.js';
import { ApiError } from '../../shared/problems.js';
import type { AnswersService } from './answer.js';
import { NO_MODEL_PROVIDER, type AgentTaskRunner } from './task-scheduler.js';

/**
 * Scheduled tasks' runner: the task's prompt answered by the answering loop as its owner, who must
 * still be able to use the agent (checked again each run: access changes between runs), in a new
 * thread of theirs; the answer is mailed to them when an SMTP server is configured. A mail that
 * cannot be sent is logged and does not fail the run: the answer is stored either way.
 */
export function taskRunner(deps: {
  answers: AnswersService;
  callerFor: (tenantId: number, userId: number) => Promise<Caller>;
  mailer: Mailer | null;
  onError: (error: unknown, what: string) => void;
}): AgentTaskRunner {
  return async (input) => {
    const caller = await deps.callerFor(input.tenantId, input.ownerUserId);
    let result: Awaited<ReturnType<AnswersService['ask']>>;
    try {
      result = await deps.answers.ask(
        { kind: 'user', caller },
        { deploymentId: input.deploymentId, agentId: input.agentId, threadId: null, question: input.prompt, signal: input.signal },
        () => undefined,
      );
    } catch (error) {
      // Kept word for word: the runs' history and their tests know this message.
      if (error instanceof ApiError && error.code === 'AI_NOT_CONFIGURED') throw new Error(NO_MODEL_PROVIDER, { cause: error });
      throw error;
    }
    const answer = result.message.text;
    await input.log(`Answered in thread ${result.thread.id} (${answer.length} characters).`);
    if (deps.mailer !== null) {
      try {
        await deps.mailer.send({
          to: caller.actor.email,
          subject: `Scheduled task ${input.taskId}: ${input.prompt.slice(0, 80)}`,
          text: `${answer}\n\n(Deployment ${input.deploymentId}, agent ${input.agentId}, thread ${result.thread.id}.)`,
        });
      } catch (error) {
        await input.log(`The answer was not mailed: ${error instanceof Error ? error.message : String(error)}`);
        deps.onError(error, `agents: mailing scheduled task ${input.taskId}'s answer`);
      }
    }
    return { answer, threadId: result.thread.id };
  };
}
