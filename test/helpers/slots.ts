/**
 * Redis Cluster's key → hash slot mapping: CRC16 (XMODEM) of the key, or of
 * its hash tag (the text between the first `{` and the next `}`, when not
 * empty), mod 16,384. Used to see how the `{oo:S}` shard tags spread over a
 * cluster's masters (docs/scaling.md) without a cluster at hand.
 */
export const CLUSTER_SLOTS = 16_384;

const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

export function hashSlot(key: string): number {
  const open = key.indexOf('{');
  let hashed = key;
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) hashed = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(hashed, 'utf8')) % CLUSTER_SLOTS;
}

/** The masters' slot ranges as `redis-cli --cluster create` makes them: contiguous, each about 16384/masters long. */
export function evenSlotRanges(masters: number): Array<[number, number]> {
  const per = CLUSTER_SLOTS / masters;
  const out: Array<[number, number]> = [];
  let first = 0;
  for (let m = 0; m < masters; m++) {
    let last = Math.round(m * per + per - 1);
    if (last > CLUSTER_SLOTS - 1 || m === masters - 1) last = CLUSTER_SLOTS - 1;
    if (last < first) last = first;
    out.push([first, last]);
    first = last + 1;
  }
  return out;
}

/**
 * How `shards` shard tags spread over `masters` masters with even slot ranges:
 * the shards each master holds. Keys spread evenly over the shards, so a
 * master's share of the load is its share of the shards.
 */
export function shardsPerMaster(shards: number, masters: number): number[] {
  const ranges = evenSlotRanges(masters);
  const per = new Array<number>(masters).fill(0);
  for (let s = 0; s < shards; s++) {
    const slot = hashSlot(`{oo:${s}}`);
    per[ranges.findIndex(([lo, hi]) => slot >= lo && slot <= hi)]!++;
  }
  return per;
}
