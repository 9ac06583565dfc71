import {
  commandLineAdvice,
  nearestOption,
  npmHint,
  optionsNpmTook,
  unknownOption,
} from '../../src/tools/cli/npmOptions';

describe('the hint for options npm took for itself', () => {
  it('finds them among npm_config_* variables, dashes as underscores', () => {
    const env = { npm_config_events: 'true', npm_config_api_key: 'sk_x', npm_config_cache: '/tmp' };
    expect(optionsNpmTook(['events', 'serve', 'api-key'], env)).toEqual(['--events', '--api-key']);
    expect(optionsNpmTook(['events'], {})).toEqual([]);
  });

  it('quotes the options npm took, not a fixed example, and never their values (#61.3)', () => {
    expect(npmHint('npm start', ['--serve', '--port'])).toBe(
      'npm kept --serve, --port for itself: put -- before the options, as in `npm start -- --serve --port`.',
    );
  });

  it('says what was wrong without showing what was typed', () => {
    const stray = Object.assign(new Error("Unexpected argument 'sk_live_secret'"), {
      code: 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL',
    });
    const advice = commandLineAdvice(stray, 'npm start', 'npm start', ['sk_live_secret'], ['events'], {
      npm_config_events: 'true',
    });
    expect(advice).toBe(
      'npm start was given something that is not one of its options (not shown here, in case it is your key). npm kept --events for itself: put -- before the options, as in `npm start -- --events`.',
    );
  });
});

describe('a mistyped option (#61.12)', () => {
  const names = ['integration-key', 'rotate-integration-key', 'app-id', 'app-name', 'help'];
  const unknown = Object.assign(new Error('Unknown option'), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });

  it('is named up to any =, never its value, with the nearest known option', () => {
    expect(unknownOption(['--app-id', 'app_x', '--integration-keys=sk_secret'], names)).toBe('--integration-keys');
    expect(nearestOption('--integration-keys', names)).toBe('--integration-key');
    const advice = commandLineAdvice(
      unknown,
      'The set-up',
      'npm run setup',
      ['--integration-keys=sk_secret'],
      names,
      {},
    );
    expect(advice).toBe('The set-up does not know the option --integration-keys: did you mean --integration-key?');
    expect(advice).not.toContain('sk_secret');
  });

  it('suggests nothing far from every option, and names nothing that does not start with --', () => {
    expect(nearestOption('--verbose', names)).toBeUndefined();
    expect(commandLineAdvice(unknown, 'The set-up', 'npm run setup', ['--verbose'], names, {})).toBe(
      'The set-up does not know the option --verbose.',
    );
    // A key typed after -- is no option's name: never shown.
    expect(commandLineAdvice(unknown, 'The set-up', 'npm run setup', ['--sk_live_Secret'], names, {})).toBe(
      'The set-up was given an option it does not know (not shown here, in case it holds your key).',
    );
    expect(commandLineAdvice(unknown, 'The set-up', 'npm run setup', ['-x'], names, {})).toBe(
      'The set-up was given an option it does not know (not shown here, in case it holds your key).',
    );
  });
});
