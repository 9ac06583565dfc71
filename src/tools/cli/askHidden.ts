import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

/** Thrown when the person stops the question (Ctrl+C, Ctrl+D) instead of answering it. */
export class QuestionStopped extends Error {}

/**
 * Asks a question in the terminal and reads the answer without showing it:
 * readline reads the line (in raw mode on a terminal, so it does the editing)
 * and echoes it to an output that discards everything; only the question and
 * the final line break reach `output`.
 */
export const askHidden = (
  question: string,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<string> =>
  new Promise((resolve, reject) => {
    const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
    const rl = createInterface({ input, output: muted, terminal: true, historySize: 0 });
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      output.write('\n');
      rl.close();
      outcome();
    };
    output.write(question);
    rl.once('line', (answer) => finish(() => resolve(answer)));
    rl.once('SIGINT', () => finish(() => reject(new QuestionStopped('stopped at the question'))));
    rl.once('close', () => finish(() => reject(new QuestionStopped('no answer was given'))));
  });
