/** The logging surface the simulator needs; pino, winston and console all fit it. */
export interface SimLogger {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

const noop = (): void => undefined;

export const silentLogger: SimLogger = { debug: noop, info: noop, warn: noop, error: noop };
