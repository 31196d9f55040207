/**
 * The nemesis's menu and its seeded draw. A schedule is a list of faults,
 * each with when it starts (ms into the workload) and how long it lasts; the
 * same seed draws the same schedule (not the same interleaving: the machine
 * decides that), so a failure replays from its seed, and a shrunk schedule
 * is printed whole so it can be replayed as it is.
 */
import { seededRandom } from '../../helpers/seed.js';

export type StoreKind = 'redis' | 'postgres';

export type Fault =
  /** Redis: SIGSTOP, then SIGCONT after `ms`. */
  | { kind: 'store-pause'; ms: number }
  /** Redis: `DEBUG SLEEP`, the server busy in one command. */
  | { kind: 'store-sleep'; ms: number }
  /**
   * Redis: SIGKILL, then started again after `ms` (empty unless the run keeps an append-only file).
   * Postgres (menu 2): `pg_ctl stop -m immediate`, then started again after `ms`, through crash recovery.
   */
  | { kind: 'store-restart'; ms: number }
  /** Every connection to the store stops moving bytes for `ms`, then resumes or dies. */
  | { kind: 'store-blackhole'; ms: number; drop: boolean }
  /** Every connection to the store is reset at once. */
  | { kind: 'store-reset' }
  /** Latency each way on the store's connections for `ms`. */
  | { kind: 'store-latency'; ms: number; oneWayMs: number }
  /** Replica `replica` SIGKILLed or SIGTERMed, then started again on the same journal. */
  | { kind: 'replica-kill'; replica: number; signal: 'SIGKILL' | 'SIGTERM' }
  /** The receiver answers so for `ms`. */
  | { kind: 'receiver'; ms: number; answer: '429' | '500' | 'slow' | 'timeout'; retryAfterS?: number }
  /** `n` processes spin for `ms` (a busy machine). */
  | { kind: 'busy'; ms: number; n: number };

export interface Scheduled {
  at: number;
  fault: Fault;
}

/**
 * The menu a schedule is drawn from. A kept seed replays the schedule it
 * failed with, so a menu is never changed, only followed by a new one:
 * 1, the first; 2 adds a Postgres crash and restart.
 */
export const MENU = 2;

export interface Schedule {
  seed: number;
  menu: number;
  store: StoreKind;
  /** Redis keeps an append-only file fsynced on every write: a restart loses nothing. */
  persistent: boolean;
  /** This replica's Date runs 2 h ahead (none: -1). */
  skewed: number;
  replicas: number;
  workloadMs: number;
  faults: Scheduled[];
}

const REPLICAS = 2;

/** Draws a schedule: `count` faults inside the workload's span, from the menu the store allows. */
export function drawSchedule(seed: number, store: StoreKind, menuVersion = MENU, workloadMs = 12_000, count = 4): Schedule {
  if (!Number.isInteger(menuVersion) || menuVersion < 1 || menuVersion > MENU) throw new Error(`there is no nemesis menu ${menuVersion} (1 to ${MENU})`);
  const rnd = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const menu: Array<() => Fault> = [
    () => ({ kind: 'store-blackhole', ms: int(300, 3000), drop: rnd() < 0.5 }),
    () => ({ kind: 'store-reset' }),
    () => ({ kind: 'store-latency', ms: int(500, 3000), oneWayMs: pick([20, 100, 400]) }),
    () => ({ kind: 'replica-kill', replica: int(0, REPLICAS - 1), signal: pick(['SIGKILL', 'SIGTERM'] as const) }),
    () => {
      const answer = pick(['429', '500', 'slow', 'timeout'] as const);
      return { kind: 'receiver', ms: int(500, 3000), answer, ...(answer === '429' ? { retryAfterS: int(1, 3) } : {}) };
    },
    () => ({ kind: 'busy', ms: int(1000, 4000), n: int(2, 4) }),
  ];
  if (store === 'redis') {
    menu.push(
      () => ({ kind: 'store-pause', ms: int(200, 3000) }),
      () => ({ kind: 'store-sleep', ms: int(200, 3000) }),
      () => ({ kind: 'store-restart', ms: int(100, 1500) }),
    );
  }
  if (store === 'postgres' && menuVersion >= 2) menu.push(() => ({ kind: 'store-restart', ms: int(100, 1500) }));
  const faults: Scheduled[] = Array.from({ length: count }, () => ({ at: int(500, workloadMs - 1500), fault: pick(menu)() })).sort((a, b) => a.at - b.at);
  return {
    seed,
    menu: menuVersion,
    store,
    persistent: store === 'redis' && rnd() < 0.5,
    skewed: rnd() < 0.3 ? int(0, REPLICAS - 1) : -1,
    replicas: REPLICAS,
    workloadMs,
    faults,
  };
}

/** One line per fault, for the failure message and `npm run nemesis`. */
export function describeSchedule(s: Schedule): string {
  const head = `seed ${s.seed} on ${s.store}${s.menu < MENU ? ` (menu ${s.menu})` : ''}${s.persistent ? ' (append-only file)' : ''}, ${s.replicas} replicas${s.skewed >= 0 ? `, replica ${s.skewed} 2 h ahead` : ''}, ${s.workloadMs} ms of workload`;
  return [head, ...s.faults.map((f) => `  at ${String(f.at).padStart(5)} ms: ${JSON.stringify(f.fault)}`)].join('\n');
}
