/**
 * Runs a command-line tool's `main` and sets the process's exit code from it;
 * an unexpected error ends the run with one plain line and exit code 1.
 * For the set-up, the sandbox, the soak and the benchmark (never the Zapier app).
 */
export const runCommand = (main: () => Promise<number>, stoppedLine: string): void => {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${stoppedLine}: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
};
