/**
 * The common npm mistake, for the commands run through npm scripts: options
 * typed without `--` before them (`npm start --events 3`) are taken by npm
 * for itself and handed over as npm_config_* environment variables, while a
 * value after them is left behind as a stray argument.
 */

export type Env = Record<string, string | undefined>;

/** The options (names without dashes) npm took for itself, as `--name`. */
export const optionsNpmTook = (names: readonly string[], env: Env): string[] =>
  names.filter((name) => env[`npm_config_${name.replace(/-/g, '_')}`] !== undefined).map((name) => `--${name}`);

/**
 * What to do about it, with the options npm took: `npm start` and `--events` give "npm kept --events for itself:
 * put -- before the options, as in `npm start -- --events`." Their values are not shown (one may be a key).
 */
export const npmHint = (command: string, took: readonly string[]): string =>
  `npm kept ${took.join(', ')} for itself: put -- before the options, as in \`${command} -- ${took.join(' ')}\`.`;

/**
 * The first option of a command line that the command does not know, up to any `=` (what follows may be a key),
 * where it looks like an option's name (lower case, digits and dashes, up to 40): a key typed after `--` does not.
 */
export const unknownOption = (argv: readonly string[], names: readonly string[]): string | undefined => {
  const option = argv.find((arg) => arg.startsWith('--') && !names.includes(arg.slice(2).split('=')[0] ?? ''));
  const name = option?.split('=')[0];
  return name !== undefined && /^--[a-z][a-z0-9-]{0,39}$/.test(name) ? name : undefined;
};

/** The known option nearest a mistyped one, if it is within three edits of it (Levenshtein's distance). */
export const nearestOption = (typed: string, names: readonly string[]): string | undefined => {
  const distance = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, index) => index);
    for (let i = 1; i <= a.length; i += 1) {
      const next = [i];
      for (let j = 1; j <= b.length; j += 1) {
        const substitution = (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
        next.push(Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, substitution));
      }
      row = next;
    }
    return row[b.length] ?? Infinity;
  };
  const ranked = names.map((name) => ({ name, far: distance(typed.replace(/^--/, ''), name) }));
  const best = ranked.sort((a, b) => a.far - b.far)[0];
  return best && best.far <= 3 ? `--${best.name}` : undefined;
};

/**
 * What was wrong with a command line parseArgs refused, in the command's own words: an unknown option by its name
 * (up to any `=`), with the nearest known one; never a value, nor a stray argument, which may be a key (a value
 * whose option npm took, left behind). `what` names the command: "The set-up".
 */
export const commandLineProblem = (error: unknown, what: string, argv: readonly string[], names: readonly string[]) => {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  const unknown = unknownOption(argv, names);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown !== undefined) {
    const nearest = nearestOption(unknown, names);
    return `${what} does not know the option ${unknown}${nearest ? `: did you mean ${nearest}?` : '.'}`;
  }
  return code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
    ? `${what} was given something that is not one of its options (not shown here, in case it is your key).`
    : code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
      ? `${what} was given an option it does not know (not shown here, in case it holds your key).`
      : code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
        ? `An option of ${what.replace(/^The /, 'the ')} was given without its value, or with a value it does not take.`
        : `${what} could not read its options.`;
};

/** commandLineProblem, then, where npm took options for itself, what to do about it. */
export const commandLineAdvice = (
  error: unknown,
  what: string,
  command: string,
  argv: readonly string[],
  names: readonly string[],
  env: Env,
): string => {
  const took = optionsNpmTook(names, env);
  return `${commandLineProblem(error, what, argv, names)}${took.length > 0 ? ` ${npmHint(command, took)}` : ''}`;
};
