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
 * What to do about it, shown with the command's own example: `npm start` and
 * `--events 3` give "If you ran `npm start --events 3`, … as in `npm start -- --events 3`."
 */
export const npmHint = (command: string, example: string): string =>
  `If you ran \`${command} ${example}\`, npm kept the options for itself: put -- before them, as in \`${command} -- ${example}\`.`;

/**
 * What was wrong with a command line parseArgs refused, in the command's own
 * words: never what was typed, which may be a key (a value whose option npm
 * took, left behind as a stray argument). `what` names the command: "The set-up".
 */
export const commandLineProblem = (error: unknown, what: string): string => {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  return code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
    ? `${what} was given something that is not one of its options (not shown here, in case it is your key).`
    : code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
      ? `${what} was given an option it does not know (not shown here, in case it holds your key).`
      : code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
        ? `An option of ${what.replace(/^The /, 'the ')} was given without its value, or with a value it does not take.`
        : `${what} could not read its options.`;
};

/** commandLineProblem, then which options npm took (if any) and the hint. */
export const commandLineAdvice = (
  error: unknown,
  what: string,
  names: readonly string[],
  env: Env,
  hint: string,
): string => {
  const took = optionsNpmTook(names, env);
  const npm = took.length > 0 ? ` npm took ${took.join(', ')} for itself.` : '';
  return `${commandLineProblem(error, what)}${npm} ${hint}`;
};
