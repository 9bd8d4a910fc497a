// A minimal zip reader for tests: lists entries and inflates one, enough to
// look inside a .vsix without unzip.
import * as zlib from "node:zlib";

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  localHeaderOffset: number;
}

/** Lists the entries of a zip archive from its central directory. */
export function listZip(buf: Buffer): ZipEntry[] {
  const eocdSig = 0x06054b50;
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === eocdSig) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw new Error("not a zip archive: no end of central directory");
  }
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) {
      throw new Error(`bad central directory entry ${i} at ${p}`);
    }
    const method = buf.readUInt16LE(p + 10);
    const compressedSize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const localHeaderOffset = buf.readUInt32LE(p + 42);
    const name = buf.toString("utf8", p + 46, p + 46 + nameLen);
    entries.push({ name, method, compressedSize, localHeaderOffset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Returns the uncompressed content of an entry (stored or deflated). */
export function readZipEntry(buf: Buffer, e: ZipEntry): Buffer {
  const p = e.localHeaderOffset;
  if (buf.readUInt32LE(p) !== 0x04034b50) {
    throw new Error(`bad local header for ${e.name}`);
  }
  const start = p + 30 + buf.readUInt16LE(p + 26) + buf.readUInt16LE(p + 28);
  const data = buf.subarray(start, start + e.compressedSize);
  if (e.method === 0) {
    return Buffer.from(data);
  }
  if (e.method === 8) {
    return zlib.inflateRawSync(data);
  }
  throw new Error(`${e.name}: unsupported compression method ${e.method}`);
}
