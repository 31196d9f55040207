import { type Command, InvalidArgumentError } from 'commander';
import { ConfigError } from '../config/load.js';
import { createLogger } from '../observe/logger.js';
import { DEFAULT_STORE_URL, StoreUrlError } from '../store/open.js';
import { type RunningServer, StartupError, startServer } from '../app/start.js';
import { parsePort } from './options.js';

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the HTTP API')
    .option('--port <n>', 'HTTP port; 0 picks a free one (env PORT)', process.env.PORT ?? '8080')
    .option('--host <addr>', 'bind address (env HOST)', process.env.HOST ?? '127.0.0.1')
    .option(
      '--store <url>',
      'memory:, sqlite:PATH, redis://host:port, redis+cluster://h1:p1,h2:p2 or postgres://user@host/db (env ONCEONLY_STORE)',
      process.env.ONCEONLY_STORE ?? DEFAULT_STORE_URL,
    )
    .option('--config <file>', 'YAML or JSON config file (env ONCEONLY_CONFIG)', process.env.ONCEONLY_CONFIG)
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS (env ONCEONLY_TLS_CERT)', process.env.ONCEONLY_TLS_CERT)
    .option('--tls-key <file>', 'PEM private key (env ONCEONLY_TLS_KEY)', process.env.ONCEONLY_TLS_KEY)
    .action(async (opts: Record<string, string | undefined>) => {
      const logger = createLogger();
      let server: RunningServer | undefined;
      // SIGHUP's default action ends the process. The server logs "listening" before startServer
      // returns, so a reload sent as soon as it listens would kill it if the handler came after:
      // it is installed first, and a HUP that arrives while the server starts is run once it has.
      let hupWhileStarting = false;
      const reload = (running: RunningServer) => {
        try {
          running.config.reload();
          logger.info({ config: running.config.path }, 'config reloaded');
          const pending = running.config.restartPending;
          if (pending.length > 0) logger.warn({ fields: pending }, 'config reloaded, but these fields are read at start: they take effect at the next restart');
        } catch (error) {
          logger.error({ err: (error as Error).message }, 'config reload refused; the previous config stays in force');
        }
      };
      process.on('SIGHUP', () => {
        if (server) reload(server);
        else hupWhileStarting = true;
      });
      try {
        server = await startServer({
          // Parsed here, not by commander: the default may come from PORT, which commander does not parse.
          port: parsePort(opts.port ?? '8080'),
          host: opts.host ?? '127.0.0.1',
          store: opts.store ?? DEFAULT_STORE_URL,
          configPath: opts.config,
          tlsCert: opts.tlsCert,
          tlsKey: opts.tlsKey,
          logger,
        });
      } catch (error) {
        if (error instanceof ConfigError || error instanceof StartupError || error instanceof StoreUrlError || error instanceof InvalidArgumentError) {
          process.stderr.write(`onceonly: ${error.message}\n`);
          process.exit(2);
        }
        throw error;
      }
      const running = server;
      // A rejection or exception nobody handled leaves the process in a state no
      // one can vouch for: log it and exit non-zero, and the supervisor restarts
      // a clean one (what was answered is durable; the outbox is delivered then).
      const fatal = (kind: string) => (err: unknown) => {
        logger.fatal({ err }, `${kind}: exiting`);
        process.exit(1);
      };
      process.on('unhandledRejection', fatal('unhandled rejection'));
      process.on('uncaughtException', fatal('uncaught exception'));

      if (hupWhileStarting) reload(running);
      const stop = (signal: string) => {
        logger.info({ signal }, 'draining and shutting down');
        running.close().then(
          () => process.exit(0),
          (err) => {
            logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
}
