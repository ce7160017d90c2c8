/**
 * Runs one of the operator CLIs (tokens, encryption keys): parse the arguments (a usage error
 * exits 2 with the usage), run the command (any failure exits 1 with its message), and set the
 * exit code to what the command returned.
 */
export async function runCli<C>(
  usage: string,
  parseCommand: (argv: string[]) => C,
  run: (command: C) => Promise<number>,
): Promise<void> {
  let command: C;
  try {
    command = parseCommand(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n${usage}\n`);
    process.exitCode = 2;
    return;
  }
  try {
    process.exitCode = await run(command);
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
