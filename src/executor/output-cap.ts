/**
 * The output of a command, capped: the head and the tail are kept, the middle is cut with a
 * marker. Redaction must see whole secret values, so each kept end is held with a margin of the
 * longest value and redacted before it is trimmed: a value the cut would split is replaced whole.
 */
import type { Redactor } from '../floor/redact.js';

export const OUTPUT_CAP = 30_000;
export const KEEP_HEAD = 12_000;
export const KEEP_TAIL = 18_000;
/** UTF-8 bytes per UTF-16 code unit at most: a character cut counted in code units is within this many bytes. */
const BYTES_PER_UNIT = 3;

export class CappedOutput {
  #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;
  readonly #headCap: number;
  readonly #tailCap: number;

  /** `margin`: the longest secret value in bytes (Redactor.longestBytes). */
  constructor(margin: number) {
    this.#headCap = BYTES_PER_UNIT * KEEP_HEAD + margin;
    this.#tailCap = BYTES_PER_UNIT * KEEP_TAIL + margin;
  }

  get totalBytes(): number {
    return this.#total;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    if (this.#headBytes < this.#headCap) {
      const take = Math.min(chunk.length, this.#headCap - this.#headBytes);
      this.#head.push(chunk.subarray(0, take));
      this.#headBytes += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0) return;
    this.#tail.push(chunk);
    this.#tailBytes += chunk.length;
    // Drop whole chunks from the front while what is left still covers the tail's cap.
    while (this.#tail.length > 1 && this.#tailBytes - (this.#tail[0] as Buffer).length >= this.#tailCap) {
      this.#tailBytes -= (this.#tail.shift() as Buffer).length;
    }
  }

  /** The text the model reads: whole when within OUTPUT_CAP, else head, a marker and tail, each redacted. */
  text(redactor: Redactor): string {
    const contiguous = this.#headBytes + this.#tailBytes === this.#total;
    const whole = contiguous ? Buffer.concat([...this.#head, ...this.#tail]).toString('utf8') : undefined;
    if (whole !== undefined && whole.length <= OUTPUT_CAP) return redactor.redact(whole);
    const head = whole ?? Buffer.concat(this.#head).toString('utf8');
    const tail = whole ?? Buffer.concat(this.#tail).toString('utf8');
    const cut = this.#total - Buffer.byteLength(head.slice(0, KEEP_HEAD)) - Buffer.byteLength(tail.slice(-KEEP_TAIL));
    return `${redactor.redactHead(head, KEEP_HEAD)}\n[… ${cut} bytes cut …]\n${redactor.redactTail(tail, KEEP_TAIL)}`;
  }
}
