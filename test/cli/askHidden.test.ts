import { PassThrough } from 'node:stream';
import { askHidden, QuestionStopped } from '../../src/tools/cli/askHidden';

/** A terminal as readline sees one: a stream that says it is a TTY and takes raw mode. */
class FakeTty extends PassThrough {
  readonly isTTY = true;
  readonly rawModes: boolean[] = [];
  setRawMode(mode: boolean): this {
    this.rawModes.push(mode);
    return this;
  }
}

const KEY = 'testsk_typedAtThePromptNeverShown';

const setUp = () => {
  const input = new FakeTty();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString('utf8')));
  return { input, output, shown: () => shown };
};

describe('askHidden', () => {
  it('shows the question, reads the answer in raw mode and shows nothing of it', async () => {
    const { input, output, shown } = setUp();
    const answer = askHidden('Key: ', input, output);
    for (const character of KEY) input.write(character);
    input.write('\r');
    await expect(answer).resolves.toBe(KEY);
    expect(shown()).toBe('Key: \n');
    expect(input.rawModes[0]).toBe(true);
    expect(input.rawModes[input.rawModes.length - 1]).toBe(false);
  });

  it('lets the answer be edited (backspace) as in any terminal', async () => {
    const { input, output, shown } = setUp();
    const answer = askHidden('Key: ', input, output);
    input.write(`${KEY}x\x7f\r`);
    await expect(answer).resolves.toBe(KEY);
    expect(shown()).not.toContain(KEY.slice(7));
  });

  it('stops on Ctrl+C, and at the end of the input, without an answer', async () => {
    const first = setUp();
    const stopped = askHidden('Key: ', first.input, first.output);
    first.input.write('testsk_half\x03');
    await expect(stopped).rejects.toBeInstanceOf(QuestionStopped);
    expect(first.shown()).not.toContain('testsk_half');

    const second = setUp();
    const ended = askHidden('Key: ', second.input, second.output);
    second.input.end();
    await expect(ended).rejects.toBeInstanceOf(QuestionStopped);
  });
});
