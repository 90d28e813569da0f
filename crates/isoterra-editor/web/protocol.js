// The wire format of docs/protocol.md: JSON text messages both ways and binary
// chunk-mesh frames from the server.

export const KINDS = ['side2d', 'map', 'heightmap', 'voxel'];
export const LAYER_TERRAIN = 0;
export const LAYER_WATER = 1;
export const LAYER_LINES = 2;
/** Translucent decals over the terrain (side2d: the grass rim). */
export const LAYER_DECAL = 3;

const HEADER_BYTES = 32;
const MAGIC = [0x49, 0x54, 0x4d, 0x46]; // "ITMF"

/** Frame flag: surface weights follow the colours. */
export const FLAG_SURFACE = 1;

/**
 * Parses one binary mesh frame. Returns
 * `{kind, kindName, layer, lod, chunk: [cx, cy, cz], vertexCount, indexCount,
 *   flags, positions: Float32Array, normals: Float32Array, colors: Uint8Array,
 *   surface: Uint8Array | null, indices: Uint32Array}` or throws an Error
 * naming what is wrong. `surface` holds four weights a vertex when the frame
 * has FLAG_SURFACE (terrain: grass, soil, rock, snow; water: depth / 64).
 */
export function parseFrame(buffer) {
  if (!(buffer instanceof ArrayBuffer)) throw new Error('mesh frame is not an ArrayBuffer');
  if (buffer.byteLength < HEADER_BYTES) throw new Error(`mesh frame too short: ${buffer.byteLength} bytes`);
  const dv = new DataView(buffer);
  for (let i = 0; i < 4; i++) {
    if (dv.getUint8(i) !== MAGIC[i]) throw new Error('mesh frame has a bad magic');
  }
  const version = dv.getUint8(4);
  if (version !== 1) throw new Error(`mesh frame version ${version} is not supported`);
  const kind = dv.getUint8(5);
  const layer = dv.getUint8(6);
  const lod = dv.getUint8(7);
  const chunk = [dv.getInt32(8, true), dv.getInt32(12, true), dv.getInt32(16, true)];
  const vertexCount = dv.getUint32(20, true);
  const indexCount = dv.getUint32(24, true);
  const flags = dv.getUint32(28, true);
  const hasSurface = (flags & FLAG_SURFACE) !== 0;
  const perVertex = hasSurface ? 32 : 28;
  const need = HEADER_BYTES + perVertex * vertexCount + 4 * indexCount;
  if (buffer.byteLength < need) {
    throw new Error(`mesh frame truncated: ${buffer.byteLength} bytes, header says ${need}`);
  }
  const V = vertexCount;
  const positions = new Float32Array(buffer, HEADER_BYTES, 3 * V);
  const normals = new Float32Array(buffer, HEADER_BYTES + 12 * V, 3 * V);
  const colors = new Uint8Array(buffer, HEADER_BYTES + 24 * V, 4 * V);
  const surface = hasSurface ? new Uint8Array(buffer, HEADER_BYTES + 28 * V, 4 * V) : null;
  const indices = new Uint32Array(buffer, HEADER_BYTES + perVertex * V, indexCount);
  for (let i = 0; i < indices.length; i++) {
    if (indices[i] >= V) throw new Error(`mesh frame index ${indices[i]} out of range (${V} vertices)`);
  }
  return {
    kind,
    kindName: KINDS[kind] ?? `kind${kind}`,
    layer,
    lod,
    chunk,
    vertexCount,
    indexCount,
    flags,
    positions,
    normals,
    colors,
    surface,
    indices,
  };
}

/**
 * One WebSocket to the server with automatic reconnection. Callbacks:
 * `onJson(msg)`, `onFrame(ArrayBuffer)`, `onOpen()`, `onClose(event)`.
 */
export class Connection {
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.ws = null;
    this.open = false;
    this.retryMs = 500;
    this.closedByUser = false;
    this.connect();
  }

  connect() {
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (e) {
      this.scheduleRetry();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      this.open = true;
      this.retryMs = 500;
      this.send({ type: 'hello', client: 'browser' });
      this.handlers.onOpen?.();
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data === 'string') {
        let msg;
        try {
          msg = JSON.parse(ev.data);
        } catch (e) {
          this.handlers.onProtocolError?.(`server sent text that is not JSON: ${e.message}`);
          return;
        }
        this.handlers.onJson?.(msg);
      } else {
        this.handlers.onFrame?.(ev.data);
      }
    };
    ws.onclose = (ev) => {
      const was = this.open;
      this.open = false;
      this.handlers.onClose?.(ev, was);
      if (!this.closedByUser) this.scheduleRetry();
    };
    ws.onerror = () => {};
  }

  scheduleRetry() {
    const ms = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 4000);
    setTimeout(() => this.connect(), ms);
  }

  send(msg) {
    if (!this.open || !this.ws) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  close() {
    this.closedByUser = true;
    this.ws?.close();
  }
}
