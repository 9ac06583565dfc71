import { commandLineAdvice, npmHint, optionsNpmTook } from '../../src/tools/cli/npmOptions';

describe('the hint for options npm took for itself', () => {
  it('finds them among npm_config_* variables, dashes as underscores', () => {
    const env = { npm_config_events: 'true', npm_config_api_key: 'sk_x', npm_config_cache: '/tmp' };
    expect(optionsNpmTook(['events', 'serve', 'api-key'], env)).toEqual(['--events', '--api-key']);
    expect(optionsNpmTook(['events'], {})).toEqual([]);
  });

  it("shows the command's own example with and without --", () => {
    expect(npmHint('npm start', '--events 3')).toBe(
      'If you ran `npm start --events 3`, npm kept the options for itself: put -- before them, as in `npm start -- --events 3`.',
    );
  });

  it('says what was wrong without showing what was typed', () => {
    const stray = Object.assign(new Error("Unexpected argument 'sk_live_secret'"), {
      code: 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL',
    });
    const advice = commandLineAdvice(stray, 'npm start', ['events'], { npm_config_events: 'true' }, 'HINT');
    expect(advice).toBe(
      'npm start was given something that is not one of its options (not shown here, in case it is your key). npm took --events for itself. HINT',
    );
  });
});
