// WebGL2 renderer: keeps one GPU mesh per (layer, chunk coordinate), draws
// opaque terrain lit by one directional light plus a sky/ground ambient, then
// translucent water, then outline lines; the brush preview ring is drawn on
// the terrain surface by the fragment shader (3D views) or as a screen-width
// annulus (side view).
//
// Terrain of the 3D kinds is textured: frames with surface weights blend the
// server's detail textures (grass, soil, rock, snow; made from isoterra's
// noise when the editor was built) into the vertex colour, rock projected
// from three sides (triplanar) so cliff walls are not stretched, and the
// classes mixed by the textures' heights so rock shows in hollows first.
// Water gets ripples, a depth fade at the shore and foam in the shallows.

import { LAYER_TERRAIN, LAYER_WATER, LAYER_LINES, LAYER_DECAL } from './protocol.js';
import { mat4 } from './math.js';

const TERRAIN_VS = `#version 300 es
layout(location = 0) in vec3 aPos;
layout(location = 1) in vec3 aNormal;
layout(location = 2) in vec4 aColor;
layout(location = 3) in vec4 aSurf;
uniform mat4 uViewProj;
out vec3 vPos;
out vec3 vNormal;
out vec4 vColor;
out vec4 vSurf;
void main() {
  vPos = aPos;
  vNormal = aNormal;
  vColor = aColor;
  vSurf = aSurf;
  gl_Position = uViewProj * vec4(aPos, 1.0);
}`;

const TERRAIN_FS = `#version 300 es
precision highp float;
precision mediump sampler2DArray;
in vec3 vPos;
in vec3 vNormal;
in vec4 vColor;
in vec4 vSurf;
uniform sampler2DArray uDetail;
uniform int uDetailOn;
uniform int uWater;
uniform vec2 uDetailScale;
uniform int uTriplanar;
uniform vec3 uEye;
uniform vec3 uViewDir;
uniform int uOrtho;
uniform vec3 uLightDir;
uniform float uLit;
uniform vec3 uFogColor;
uniform vec3 uSkyTop;
uniform float uViewportH;
uniform vec2 uFog;
uniform int uBrushMode;
uniform int uBrushShape;
uniform vec4 uBrush;
uniform vec3 uBrushColor;
uniform float uBrushStrength;
uniform float uAlphaScale;
uniform sampler2D uOverlay;
uniform int uOverlayOn;
uniform vec4 uOverlayRect;
out vec4 outColor;

// Layer \`layer\` of the detail textures at \`p\`, projected along the
// axes by weights \`w\` (triplanar; a weight of 0 skips its fetch).
vec4 triplanar(float layer, vec3 p, vec3 w) {
  vec4 c = vec4(0.0);
  if (w.x > 0.0) c += texture(uDetail, vec3(p.zy, layer)) * w.x;
  if (w.y > 0.0) c += texture(uDetail, vec3(p.xz, layer)) * w.y;
  if (w.z > 0.0) c += texture(uDetail, vec3(p.xy, layer)) * w.z;
  return c;
}

// Layer \`layer\` at \`p\` by \`triplanar\` when the class weight \`k\` counts;
// alpha is then the texture's height raised by the weight (else -10: left
// out of the blend).
vec4 classTex(float layer, float k, vec3 p, vec3 a) {
  if (k < 0.02) return vec4(0.5, 0.5, 0.5, -10.0);
  vec4 t = triplanar(layer, p, a);
  return vec4(t.rgb, k + t.a * 0.6);
}

// The same, projected from above only: ground classes on maps and
// heightmaps, where steep ground is rock (one fetch instead of three).
vec4 classTop(float layer, float k, vec3 p) {
  if (k < 0.02) return vec4(0.5, 0.5, 0.5, -10.0);
  vec4 t = texture(uDetail, vec3(p.xz, layer));
  return vec4(t.rgb, k + t.a * 0.6);
}

// The detail colour (about 0.5 on average) of the surface classes in
// \`surf\` (grass, soil, rock, snow) at \`p\` with normal \`n\`: each class's
// weight raised by its texture's height, and the highest ones kept, so
// that rock shows in the low parts of grass first.
vec3 detail(vec4 surf, vec3 p, vec3 n) {
  vec3 a = n * n;
  a = a * a * a;
  a /= a.x + a.y + a.z;
  a *= step(vec3(0.04), a);
  a /= max(a.x + a.y + a.z, 1e-4);
  vec3 ground = p * uDetailScale.x;
  vec4 t0, t1, t3;
  if (uTriplanar == 1) {
    t0 = classTex(0.0, surf.x, ground, a);
    t1 = classTex(1.0, surf.y, ground, a);
    t3 = classTex(3.0, surf.w, ground, a);
  } else {
    t0 = classTop(0.0, surf.x, ground);
    t1 = classTop(1.0, surf.y, ground);
    t3 = classTop(3.0, surf.w, ground);
  }
  vec4 t2 = classTex(2.0, surf.z, p * uDetailScale.y, a);
  vec4 h = vec4(t0.a, t1.a, t2.a, t3.a);
  float best = max(max(h.x, h.y), max(h.z, h.w));
  vec4 w = max(h - best + 0.25, 0.0);
  vec3 sum = t0.rgb * w.x + t1.rgb * w.y + t2.rgb * w.z + t3.rgb * w.w;
  // A much larger, unaligned sample of the soft snow texture varies the
  // tiles, so that their repeats do not line up into a pattern. It is
  // taken on the plane the surface faces most (with triplanar ground; from
  // above otherwise), so that a side view or a wall does not smear it into
  // stripes.
  vec2 mp = uTriplanar == 0 || a.y >= max(a.x, a.z) ? p.xz : a.z >= a.x ? p.xy : p.zy;
  float macro = texture(uDetail, vec3(mp * uDetailScale.x * 0.137 + vec2(0.31, 0.57), 3.0)).g;
  return sum / max(w.x + w.y + w.z + w.w, 1e-4) * (1.0 + 3.0 * (macro - 0.5));
}

void main() {
  vec3 base = vColor.rgb;
  vec3 n = normalize(vNormal);
  float alpha = vColor.a;
  float dist = length(uEye - vPos);
  if (uDetailOn == 1 && uWater == 0 && vSurf.x + vSurf.y + vSurf.z + vSurf.w > 0.5) {
    vec3 d = detail(vSurf, vPos, n);
    // Far away the grain fades towards its mean, so it does not shimmer
    // (not in the side view: its camera is far, but seen flat and whole).
    if (uOrtho == 0) d = mix(d, vec3(0.5), clamp(dist / 600.0, 0.0, 0.7));
    base = clamp(base * d * 2.0, 0.0, 1.0);
  }
  if (uWater == 1) {
    // Depth in world units (the frame sends 1/64 units); frames without
    // depth count as deep.
    float depth = vSurf.x + vSurf.y + vSurf.z + vSurf.w > 0.0 ? vSurf.x * 255.0 / 64.0 : 4.0;
    vec4 w = uDetailOn == 1 ? texture(uDetail, vec3(vPos.xz * uDetailScale.x * 0.7, 4.0)) : vec4(0.5);
    base *= 0.8 + 0.4 * w.r;
    float foam = (1.0 - smoothstep(0.04, 0.35, depth)) * (0.25 + 0.75 * w.a);
    base = mix(base, vec3(0.93, 0.96, 0.97), foam * 0.5);
    // The water thins out to nothing at the shoreline.
    alpha = mix(alpha, 0.9, foam * 0.4) * smoothstep(0.0, 0.12, depth);
  }
  vec3 toEye = uOrtho == 1 ? -uViewDir : normalize(uEye - vPos);
  // Light the side that faces the eye. The triangle's own facing decides,
  // not the interpolated normal: on steep slopes that normal can point away
  // from the eye on a front face, which flipped it into dark speckles.
  if (!gl_FrontFacing) n = -n;
  float diffuse = max(dot(n, uLightDir), 0.0);
  vec3 ambient = mix(vec3(0.22, 0.21, 0.20), vec3(0.40, 0.44, 0.50), n.y * 0.5 + 0.5);
  vec3 lit = base * (ambient + vec3(1.0, 0.95, 0.85) * diffuse * 0.95);
  vec3 halfV = normalize(uLightDir + toEye);
  float spec = pow(max(dot(n, halfV), 0.0), 48.0) * (1.0 - vColor.a) * 1.5;
  vec3 col = mix(base, lit, uLit) + vec3(spec);
  if (uOverlayOn == 1) {
    vec2 uv = (vPos.xz - uOverlayRect.xy) / (uOverlayRect.zw - uOverlayRect.xy);
    if (uv.x >= 0.0 && uv.y >= 0.0 && uv.x < 1.0 && uv.y < 1.0) {
      vec4 o = texture(uOverlay, uv);
      col = mix(col, o.rgb, o.a);
    }
  }
  if (uBrushMode > 0) {
    vec3 off = uBrushMode == 1 ? vec3(vPos.x - uBrush.x, 0.0, vPos.z - uBrush.z)
             : uBrushMode == 2 ? vPos - uBrush.xyz
             : vec3(vPos.xy - uBrush.xy, 0.0);
    vec3 a = abs(off);
    float d = uBrushShape == 1 ? max(a.x, max(a.y, a.z))
            : uBrushShape == 2 ? a.x + a.y + a.z
            : length(off);
    float w = max(fwidth(d), 1e-4);
    float ring = 1.0 - smoothstep(w * 0.75, w * 2.0, abs(d - uBrush.w));
    // inside the ring: a fill as strong as the brush, fading towards the
    // rim the way a dab's effect falls off
    float t = clamp(d / max(uBrush.w, 1e-4), 0.0, 1.0);
    float falloff = (1.0 - t * t) * (1.0 - t * t);
    float inside = d < uBrush.w ? 0.05 + 0.3 * uBrushStrength * falloff : 0.0;
    col = mix(col, uBrushColor, max(ring * 0.95, inside));
  }
  float fog = uFog.y > uFog.x ? clamp((dist - uFog.x) / (uFog.y - uFog.x), 0.0, 1.0) : 0.0;
  // the sky gradient behind this pixel, so fully fogged ground is sky
  vec3 sky = mix(uFogColor, uSkyTop, clamp(gl_FragCoord.y / uViewportH, 0.0, 1.0));
  col = mix(col, sky, fog * fog);
  outColor = vec4(col, alpha * uAlphaScale);
}`;

const FLAT_VS = `#version 300 es
layout(location = 0) in vec3 aPos;
layout(location = 2) in vec4 aColor;
uniform mat4 uViewProj;
uniform vec4 uColor;
uniform int uUseVertexColor;
out vec4 vColor;
void main() {
  vColor = uUseVertexColor == 1 ? aColor : uColor;
  gl_Position = uViewProj * vec4(aPos, 1.0);
}`;

const FLAT_FS = `#version 300 es
precision highp float;
in vec4 vColor;
out vec4 outColor;
void main() { outColor = vColor; }`;

const SKY_VS = `#version 300 es
out vec2 vUv;
void main() {
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  vUv = p;
  gl_Position = vec4(p * 2.0 - 1.0, 0.999, 1.0);
}`;

const SKY_FS = `#version 300 es
precision highp float;
in vec2 vUv;
uniform vec3 uTop;
uniform vec3 uBottom;
out vec4 outColor;
void main() { outColor = vec4(mix(uBottom, uTop, clamp(vUv.y, 0.0, 1.0)), 1.0); }`;

function compile(gl, type, src) {
  const s = gl.createShader(type);
  gl.shaderSource(s, src);
  gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) {
    throw new Error(`shader compile failed: ${gl.getShaderInfoLog(s)}`);
  }
  return s;
}

function program(gl, vs, fs) {
  const p = gl.createProgram();
  gl.attachShader(p, compile(gl, gl.VERTEX_SHADER, vs));
  gl.attachShader(p, compile(gl, gl.FRAGMENT_SHADER, fs));
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) {
    throw new Error(`shader link failed: ${gl.getProgramInfoLog(p)}`);
  }
  const uniforms = {};
  const n = gl.getProgramParameter(p, gl.ACTIVE_UNIFORMS);
  for (let i = 0; i < n; i++) {
    const info = gl.getActiveUniform(p, i);
    uniforms[info.name] = gl.getUniformLocation(p, info.name);
  }
  return { p, u: uniforms };
}

function hexToRgb(hex) {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex ?? '');
  if (!m) return [1, 1, 1];
  const v = parseInt(m[1], 16);
  return [((v >> 16) & 255) / 255, ((v >> 8) & 255) / 255, (v & 255) / 255];
}

const LIGHT = (() => {
  const l = [-0.5, 0.72, 0.48];
  const n = Math.hypot(...l);
  return l.map((x) => x / n);
})();

// Voxel solids show as the ring of their footprint: a box as a square.
const SHAPES = { circle: 0, square: 1, diamond: 2, sphere: 0, box: 1, capsule: 0 };

/** A point on the outline of a unit brush of `shape` at angle `a`. */
function outline(shape, a) {
  const c = Math.cos(a);
  const s = Math.sin(a);
  if (shape === 'square') {
    const m = Math.max(Math.abs(c), Math.abs(s));
    return [c / m, s / m];
  }
  if (shape === 'diamond') {
    const m = Math.abs(c) + Math.abs(s);
    return [c / m, s / m];
  }
  return [c, s];
}

export const chunkKey = (layer, c) => `${layer}:${c[0]},${c[1]},${c[2]}`;

/**
 * Whether the box `[min, max]` may show in the view of the column-major
 * view-projection matrix `m`: false only when all eight corners lie
 * beyond one side of the clip volume.
 */
export function boxInView(m, min, max) {
  let outside = 0b111111;
  for (let i = 0; i < 8; i++) {
    const x = i & 1 ? max[0] : min[0];
    const y = i & 2 ? max[1] : min[1];
    const z = i & 4 ? max[2] : min[2];
    const cx = m[0] * x + m[4] * y + m[8] * z + m[12];
    const cy = m[1] * x + m[5] * y + m[9] * z + m[13];
    const cz = m[2] * x + m[6] * y + m[10] * z + m[14];
    const cw = m[3] * x + m[7] * y + m[11] * z + m[15];
    let o = 0;
    if (cx < -cw) o |= 1;
    if (cx > cw) o |= 2;
    if (cy < -cw) o |= 4;
    if (cy > cw) o |= 8;
    if (cz < -cw) o |= 16;
    if (cz > cw) o |= 32;
    outside &= o;
    if (!outside) return true;
  }
  return false;
}

export class Renderer {
  constructor(canvas, { antialias = true } = {}) {
    this.canvas = canvas;
    const gl = canvas.getContext('webgl2', {
      antialias,
      preserveDrawingBuffer: true,
      alpha: false,
      powerPreference: 'high-performance',
    });
    if (!gl) throw new Error('WebGL2 is not available in this browser');
    this.gl = gl;
    this.terrain = program(gl, TERRAIN_VS, TERRAIN_FS);
    this.flat = program(gl, FLAT_VS, FLAT_FS);
    this.sky = program(gl, SKY_VS, SKY_FS);
    this.emptyVao = gl.createVertexArray();
    this.meshes = new Map();
    /** Whether the main view skips meshes outside it (see `drawLayer`). */
    this.cull = true;
    this.view = 'map';
    this.overlay = { vao: gl.createVertexArray(), vbo: gl.createBuffer(), count: 0 };
    this.bounds = null;
    this.boundsLines = null;
    // Backing-store scale below the device pixel ratio, for slow GPUs.
    this.scale = 1;
    // Chunk coordinates a frame arrived for (empty meshes too).
    this.known = new Set();
    this.overlayTex = gl.createTexture();
    this.overlayOn = false;
    this.overlayRect = [0, 0, 1, 1];
    gl.bindTexture(gl.TEXTURE_2D, this.overlayTex);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, 1, 1, 0, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
    this.setTextureFilter(gl.NEAREST);
    gl.bindTexture(gl.TEXTURE_2D, null);
    this.mini = null;
    // Detail textures: none until loadDetail() has them; frames without
    // surface weights read (0, 0, 0, 0) and stay untextured.
    this.detailTex = null;
    // A 1x1 mid-grey stand-in, so the sampler always has a texture.
    this.detailStandIn = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, this.detailStandIn);
    gl.texImage3D(gl.TEXTURE_2D_ARRAY, 0, gl.RGBA8, 1, 1, 1, 0, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array([128, 128, 128, 128]));
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, null);
    this.detailOn = true;
    this.detailScale = [1 / 8, 1 / 12];
    gl.vertexAttrib4f(3, 0, 0, 0, 0);
  }

  /**
   * Loads the detail textures (`welcome.detail`: url, side, layers) into a
   * texture array with mipmaps. Resolves true once they are in use.
   */
  async loadDetail(info) {
    if (!info || !info.url || this.detailTex) return !!this.detailTex;
    const side = info.side | 0;
    const layers = Array.isArray(info.layers) ? info.layers.length : 0;
    const res = await fetch(info.url);
    if (!res.ok) throw new Error(`detail textures: HTTP ${res.status}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (side <= 0 || layers <= 0 || bytes.length !== side * side * 4 * layers) {
      throw new Error(`detail textures: ${bytes.length} bytes for ${layers} layers of ${side}²`);
    }
    const gl = this.gl;
    const tex = gl.createTexture();
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, tex);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    gl.texImage3D(gl.TEXTURE_2D_ARRAY, 0, gl.RGBA8, side, side, layers, 0, gl.RGBA, gl.UNSIGNED_BYTE, bytes);
    gl.generateMipmap(gl.TEXTURE_2D_ARRAY);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MIN_FILTER, gl.LINEAR_MIPMAP_LINEAR);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_WRAP_S, gl.REPEAT);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_WRAP_T, gl.REPEAT);
    const aniso = gl.getExtension('EXT_texture_filter_anisotropic');
    if (aniso) {
      const max = gl.getParameter(aniso.MAX_TEXTURE_MAX_ANISOTROPY_EXT);
      gl.texParameterf(gl.TEXTURE_2D_ARRAY, aniso.TEXTURE_MAX_ANISOTROPY_EXT, Math.min(8, max));
    }
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, null);
    gl.activeTexture(gl.TEXTURE0);
    this.detailTex = tex;
    return true;
  }

  /**
   * Detail textures on or off, and their scale: world units one tile of
   * ground (grass, soil, snow) and of rock covers. Rock is always projected
   * from three sides; ground only with `triplanar` (voxel caves and
   * overhangs), else from above.
   */
  setDetail(on, groundUnits = 8, rockUnits = 12, triplanar = false) {
    this.detailOn = on;
    this.detailScale = [1 / groundUnits, 1 / rockUnits];
    this.detailTriplanar = triplanar;
  }

  /** Whether the terrain is drawn with detail textures now. */
  get detailActive() {
    return this.detailOn && !!this.detailTex;
  }

  setTextureFilter(filter) {
    const gl = this.gl;
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, filter);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, filter);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
  }

  /**
   * An RGBA overlay of `w` x `h` texels laid over the x/z rectangle
   * `rect` = [x0, z0, x1, z1] (row 0 at z0), blended by its alpha; null
   * removes it.
   */
  setOverlay(rgba, w, h, rect) {
    const gl = this.gl;
    if (!rgba) {
      this.overlayOn = false;
      return;
    }
    gl.bindTexture(gl.TEXTURE_2D, this.overlayTex);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, w, h, 0, gl.RGBA, gl.UNSIGNED_BYTE, rgba);
    gl.bindTexture(gl.TEXTURE_2D, null);
    this.overlayRect = rect;
    this.overlayOn = true;
  }

  setView(view, bounds) {
    this.view = view;
    this.bounds = bounds;
    if (this.boundsLines) {
      const gl = this.gl;
      gl.deleteVertexArray(this.boundsLines.vao);
      gl.deleteBuffer(this.boundsLines.vbo);
      gl.deleteBuffer(this.boundsLines.cbo);
    }
    this.boundsLines = null;
  }

  clear() {
    for (const m of this.meshes.values()) this.freeMesh(m);
    this.meshes.clear();
    this.known.clear();
    this.overlayOn = false;
  }

  freeMesh(m) {
    const gl = this.gl;
    gl.deleteVertexArray(m.vao);
    gl.deleteBuffer(m.vbo);
    gl.deleteBuffer(m.ibo);
  }

  /** Replaces (or with V = 0 removes) the mesh of one chunk layer. */
  upsert(frame) {
    const key = chunkKey(frame.layer, frame.chunk);
    const old = this.meshes.get(key);
    if (old) {
      this.freeMesh(old);
      this.meshes.delete(key);
    }
    this.known.add(`${frame.chunk[0]},${frame.chunk[1]},${frame.chunk[2]}`);
    if (frame.vertexCount === 0 || frame.indexCount === 0) return;
    const gl = this.gl;
    const V = frame.vertexCount;
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    const vbo = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, vbo);
    // positions, normals, colours and surface weights are contiguous in the
    // frame: upload once.
    const perVertex = frame.surface ? 32 : 28;
    const body = new Uint8Array(frame.positions.buffer, frame.positions.byteOffset, perVertex * V);
    gl.bufferData(gl.ARRAY_BUFFER, body, gl.STATIC_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 12, 0);
    gl.enableVertexAttribArray(1);
    gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 12, 12 * V);
    gl.enableVertexAttribArray(2);
    gl.vertexAttribPointer(2, 4, gl.UNSIGNED_BYTE, true, 4, 24 * V);
    if (frame.surface) {
      gl.enableVertexAttribArray(3);
      gl.vertexAttribPointer(3, 4, gl.UNSIGNED_BYTE, true, 4, 28 * V);
    }
    const ibo = gl.createBuffer();
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ibo);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, frame.indices, gl.STATIC_DRAW);
    gl.bindVertexArray(null);
    const p = frame.positions;
    const min = [Infinity, Infinity, Infinity];
    const max = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < p.length; i += 3) {
      for (let k = 0; k < 3; k++) {
        const v = p[i + k];
        if (v < min[k]) min[k] = v;
        if (v > max[k]) max[k] = v;
      }
    }
    this.meshes.set(key, {
      key,
      layer: frame.layer,
      chunk: frame.chunk,
      lod: frame.lod,
      vao,
      vbo,
      ibo,
      count: frame.indexCount,
      positions: frame.positions,
      indices: frame.indices,
      min,
      max,
    });
  }

  /** Removes every layer of the listed chunk coordinates. */
  unload(chunks) {
    for (const c of chunks) {
      this.known.delete(`${c[0]},${c[1]},${c[2]}`);
      for (const layer of [LAYER_TERRAIN, LAYER_WATER, LAYER_LINES, LAYER_DECAL]) {
        const key = chunkKey(layer, c);
        const m = this.meshes.get(key);
        if (m) {
          this.freeMesh(m);
          this.meshes.delete(key);
        }
      }
    }
  }

  /** Chunks a frame arrived for and that were not unloaded since. */
  knownCount() {
    return this.known.size;
  }

  /** Distinct chunk coordinates that hold at least one layer. */
  chunkCount() {
    const set = new Set();
    for (const m of this.meshes.values()) set.add(m.key.slice(m.key.indexOf(':') + 1));
    return set.size;
  }

  triangleCount() {
    let n = 0;
    for (const m of this.meshes.values()) if (m.layer !== LAYER_LINES) n += m.count / 3;
    return n;
  }

  /** Meshes that take part in picking (opaque terrain). */
  *pickable() {
    for (const m of this.meshes.values()) if (m.layer === LAYER_TERRAIN) yield m;
  }

  /** The backing-store size the canvas should have now, in device pixels. */
  targetSize() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    let w = Math.max(1, Math.round(c.clientWidth * dpr));
    let h = Math.max(1, Math.round(c.clientHeight * dpr));
    // the observer's exact device-pixel size, when it matches the current ratio
    if (this.deviceWidth && Math.abs(this.deviceWidth - w) <= 1 && Math.abs(this.deviceHeight - h) <= 1) {
      w = this.deviceWidth;
      h = this.deviceHeight;
    }
    if (this.scale < 1) return [Math.max(1, Math.round(w * this.scale)), Math.max(1, Math.round(h * this.scale))];
    return [w, h];
  }

  /** True when the canvas's backing store no longer matches its CSS size. */
  needsResize() {
    const [w, h] = this.targetSize();
    return this.canvas.width !== w || this.canvas.height !== h;
  }

  resize() {
    const [w, h] = this.targetSize();
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
  }

  /**
   * Draws one frame. `cam` is the matrices object of a camera, `opts` holds
   * `{ brush: {pos, radius, color, mode} | null, worldPerPixel, viewDistance,
   * fog: [start, end] in view distances }`.
   */
  render(cam, opts) {
    const gl = this.gl;
    this.resize();
    this.frustum = this.cull ? cam.viewProj : null;
    this.drawn = { calls: 0, tris: 0 };
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    const side = this.view === 'side';
    const sky = side
      ? { top: [0.13, 0.16, 0.21], bottom: [0.09, 0.1, 0.13] }
      : { top: [0.42, 0.6, 0.82], bottom: [0.78, 0.84, 0.88] };
    gl.clearColor(...sky.bottom, 1);
    gl.clearDepth(1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.disable(gl.CULL_FACE);

    // sky gradient
    gl.disable(gl.DEPTH_TEST);
    gl.useProgram(this.sky.p);
    gl.uniform3fv(this.sky.u.uTop, sky.top);
    gl.uniform3fv(this.sky.u.uBottom, sky.bottom);
    gl.bindVertexArray(this.emptyVao);
    gl.drawArrays(gl.TRIANGLES, 0, 3);

    if (side) this.drawBounds(cam);

    // terrain (opaque)
    if (side) gl.disable(gl.DEPTH_TEST);
    else {
      gl.enable(gl.DEPTH_TEST);
      gl.depthFunc(gl.LEQUAL);
    }
    gl.depthMask(true);
    gl.disable(gl.BLEND);
    const vd = opts.viewDistance ?? 0;
    // Fog from `fog[0]` to `fog[1]` view distances, fading to the sky
    // behind each pixel.
    const fog = opts.fog ?? [0.9, 2.2];
    const t = this.useTerrain(cam, {
      side,
      ortho: side,
      viewDir: [-cam.view[2], -cam.view[6], -cam.view[10]],
      fogColor: sky.bottom,
      skyTop: sky.top,
      viewportH: this.canvas.height,
      fog: vd > 0 ? [vd * fog[0], vd * fog[1]] : [0, 0],
    });
    const b = opts.brush;
    if (b && !side) {
      gl.uniform1f(t.u.uBrushStrength, b.strength ?? 0.5);
      gl.uniform1i(t.u.uBrushMode, b.mode);
      gl.uniform1i(t.u.uBrushShape, SHAPES[b.shape] ?? 0);
      gl.uniform4fv(t.u.uBrush, [b.pos[0], b.pos[1], b.pos[2], b.radius]);
      gl.uniform3fv(t.u.uBrushColor, hexToRgb(b.color));
    } else {
      gl.uniform1i(t.u.uBrushMode, 0);
    }
    this.drawLayer(LAYER_TERRAIN, gl.TRIANGLES);

    // decals, then water (translucent, after opaque, no depth writes)
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    gl.depthMask(false);
    gl.uniform1i(t.u.uBrushMode, 0);
    this.drawLayer(LAYER_DECAL, gl.TRIANGLES);
    this.drawWater(t);

    // outline lines
    const f = this.flat;
    gl.useProgram(f.p);
    gl.uniformMatrix4fv(f.u.uViewProj, false, cam.viewProj);
    gl.uniform1i(f.u.uUseVertexColor, 1);
    gl.uniform4fv(f.u.uColor, [1, 1, 1, 1]);
    this.drawLayer(LAYER_LINES, gl.LINES);
    gl.depthMask(true);

    if (b && side) this.drawRing(cam, b, opts.worldPerPixel ?? 1);
    gl.disable(gl.BLEND);
    gl.bindVertexArray(null);
    this.frustum = null;
    this.lastDrawn = this.drawn;
    this.drawn = null;
  }

  /**
   * Binds the terrain program with what every terrain pass sets: the
   * camera, lighting (side view or 3D), fog and the overlay. Returns it.
   */
  useTerrain(cam, { side, ortho, viewDir, fogColor, skyTop, viewportH, fog }) {
    const gl = this.gl;
    const t = this.terrain;
    gl.useProgram(t.p);
    gl.uniformMatrix4fv(t.u.uViewProj, false, cam.viewProj);
    gl.uniform3fv(t.u.uEye, cam.eye);
    gl.uniform3fv(t.u.uViewDir, viewDir);
    gl.uniform1i(t.u.uOrtho, ortho ? 1 : 0);
    gl.uniform3fv(t.u.uLightDir, side ? [0.3, 0.5, 0.81] : LIGHT);
    gl.uniform1f(t.u.uLit, side ? 0.35 : 1.0);
    gl.uniform3fv(t.u.uFogColor, fogColor);
    gl.uniform3fv(t.u.uSkyTop, skyTop);
    gl.uniform1f(t.u.uViewportH, viewportH);
    gl.uniform2fv(t.u.uFog, fog);
    gl.uniform1f(t.u.uAlphaScale, 1);
    this.bindOverlay(t);
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, this.detailTex ?? this.detailStandIn);
    gl.activeTexture(gl.TEXTURE0);
    gl.uniform1i(t.u.uDetail, 1);
    gl.uniform1i(t.u.uDetailOn, this.detailActive ? 1 : 0);
    gl.uniform2fv(t.u.uDetailScale, this.detailScale);
    gl.uniform1i(t.u.uTriplanar, this.detailTriplanar ? 1 : 0);
    gl.uniform1i(t.u.uWater, 0);
    return t;
  }

  /** Draws the water layer with the terrain program `t` bound. */
  drawWater(t) {
    const gl = this.gl;
    gl.uniform1i(t.u.uWater, 1);
    this.drawLayer(LAYER_WATER, gl.TRIANGLES);
    gl.uniform1i(t.u.uWater, 0);
  }

  /**
   * Draws every held mesh of one layer with the bound program; while a
   * frame of the main view is drawn (`this.frustum` set), only the meshes
   * whose box reaches into the view, counted in `this.drawn`.
   */
  drawLayer(layer, mode) {
    const gl = this.gl;
    const f = this.frustum;
    for (const m of this.meshes.values()) {
      if (m.layer !== layer) continue;
      if (f && !boxInView(f, m.min, m.max)) continue;
      gl.bindVertexArray(m.vao);
      gl.drawElements(mode, m.count, gl.UNSIGNED_INT, 0);
      if (this.drawn) {
        this.drawn.calls++;
        if (mode === gl.TRIANGLES) this.drawn.tris += m.count / 3;
      }
    }
  }

  bindOverlay(t) {
    const gl = this.gl;
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.overlayTex);
    gl.uniform1i(t.u.uOverlay, 0);
    gl.uniform1i(t.u.uOverlayOn, this.overlayOn ? 1 : 0);
    gl.uniform4fv(t.u.uOverlayRect, this.overlayRect);
  }

  /** World-space box of every terrain mesh held, or null. */
  terrainBounds() {
    const min = [Infinity, Infinity, Infinity];
    const max = [-Infinity, -Infinity, -Infinity];
    let any = false;
    for (const m of this.meshes.values()) {
      if (m.layer === LAYER_LINES || m.layer === LAYER_DECAL) continue;
      any = true;
      for (let k = 0; k < 3; k++) {
        min[k] = Math.min(min[k], m.min[k]);
        max[k] = Math.max(max[k], m.max[k]);
      }
    }
    return any ? { min, max } : null;
  }

  /**
   * Draws the terrain and water held, seen straight from above (`side`
   * false: x right, -z up) or from the front (`side`: x right, y up),
   * framing `rect` = [u0, v0, u1, v1] (x/z or x/y), into a `w` x `h` image.
   * Returns the RGBA rows top first.
   */
  renderOverview(w, h, rect, side) {
    const gl = this.gl;
    let mini = this.mini;
    if (!mini || mini.w !== w || mini.h !== h) {
      if (mini) {
        gl.deleteFramebuffer(mini.fbo);
        gl.deleteTexture(mini.tex);
        gl.deleteRenderbuffer(mini.depth);
      }
      const fbo = gl.createFramebuffer();
      const tex = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, tex);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, w, h, 0, gl.RGBA, gl.UNSIGNED_BYTE, null);
      this.setTextureFilter(gl.NEAREST);
      gl.bindTexture(gl.TEXTURE_2D, null);
      const depth = gl.createRenderbuffer();
      gl.bindRenderbuffer(gl.RENDERBUFFER, depth);
      gl.renderbufferStorage(gl.RENDERBUFFER, gl.DEPTH_COMPONENT24, w, h);
      gl.bindRenderbuffer(gl.RENDERBUFFER, null);
      gl.bindFramebuffer(gl.FRAMEBUFFER, fbo);
      gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, tex, 0);
      gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.DEPTH_ATTACHMENT, gl.RENDERBUFFER, depth);
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      mini = this.mini = { fbo, tex, depth, w, h, pixels: new Uint8Array(w * h * 4) };
    }
    const [u0, v0, u1, v1] = rect;
    let cam;
    if (side) {
      const proj = mat4.ortho(u0, u1, v0, v1, -1000, 1000);
      cam = { viewProj: proj, view: mat4.identity(), eye: [(u0 + u1) / 2, (v0 + v1) / 2, 1000] };
    } else {
      const tb = this.terrainBounds();
      const top = (tb ? tb.max[1] : 100) + 10;
      const depthRange = top - (tb ? tb.min[1] : -100) + 20;
      const cx = (u0 + u1) / 2;
      const cz = (v0 + v1) / 2;
      const eye = [cx, top, cz];
      const view = mat4.lookAt(eye, [cx, top - 1, cz], [0, 0, -1]);
      const hw = (u1 - u0) / 2;
      const hh = (v1 - v0) / 2;
      const proj = mat4.ortho(-hw, hw, -hh, hh, 0.01, depthRange);
      cam = { viewProj: mat4.multiply(proj, view), view, eye };
    }
    gl.bindFramebuffer(gl.FRAMEBUFFER, mini.fbo);
    gl.viewport(0, 0, w, h);
    const bg = side ? [0.09, 0.1, 0.13] : [0.16, 0.18, 0.2];
    gl.clearColor(...bg, 1);
    gl.clearDepth(1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.disable(gl.CULL_FACE);
    if (side) {
      gl.disable(gl.DEPTH_TEST);
      this.drawBounds(cam);
    } else {
      gl.enable(gl.DEPTH_TEST);
      gl.depthFunc(gl.LEQUAL);
    }
    gl.depthMask(true);
    gl.disable(gl.BLEND);
    const t = this.useTerrain(cam, {
      side,
      ortho: true,
      viewDir: side ? [0, 0, -1] : [0, -1, 0],
      fogColor: bg,
      skyTop: bg,
      viewportH: h,
      fog: [0, 0],
    });
    gl.uniform1i(t.u.uBrushMode, 0);
    this.drawLayer(LAYER_TERRAIN, gl.TRIANGLES);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    gl.depthMask(false);
    this.drawLayer(LAYER_DECAL, gl.TRIANGLES);
    this.drawWater(t);
    gl.depthMask(true);
    gl.disable(gl.BLEND);
    gl.bindVertexArray(null);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, mini.pixels);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    // GL rows run bottom up; images top down
    const out = new Uint8ClampedArray(w * h * 4);
    const row = w * 4;
    for (let y = 0; y < h; y++) out.set(mini.pixels.subarray((h - 1 - y) * row, (h - y) * row), y * row);
    return out;
  }

  drawBounds(cam) {
    const gl = this.gl;
    const bnd = this.bounds;
    if (!bnd) return;
    if (!this.boundsLines) {
      const [x0, y0] = bnd.min;
      const [x1, y1] = bnd.max;
      const vao = gl.createVertexArray();
      gl.bindVertexArray(vao);
      const vbo = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, vbo);
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([x0, y0, 0, x1, y0, 0, x1, y1, 0, x0, y1, 0]), gl.STATIC_DRAW);
      gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 12, 0);
      // open air inside the world: sky blue at the top, dusk at the bottom
      const cbo = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, cbo);
      const bottom = [38, 44, 58, 255];
      const top = [104, 146, 196, 255];
      gl.bufferData(gl.ARRAY_BUFFER, new Uint8Array([...bottom, ...bottom, ...top, ...top]), gl.STATIC_DRAW);
      gl.enableVertexAttribArray(2);
      gl.vertexAttribPointer(2, 4, gl.UNSIGNED_BYTE, true, 4, 0);
      gl.bindVertexArray(null);
      this.boundsLines = { vao, vbo, cbo };
    }
    gl.useProgram(this.flat.p);
    gl.uniformMatrix4fv(this.flat.u.uViewProj, false, cam.viewProj);
    gl.bindVertexArray(this.boundsLines.vao);
    gl.uniform1i(this.flat.u.uUseVertexColor, 1);
    gl.drawArrays(gl.TRIANGLE_FAN, 0, 4);
    gl.uniform1i(this.flat.u.uUseVertexColor, 0);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    gl.uniform4fv(this.flat.u.uColor, [0.75, 0.82, 0.92, 0.5]);
    gl.drawArrays(gl.LINE_LOOP, 0, 4);
    gl.disable(gl.BLEND);
  }

  /** The side-view brush ring: an annulus two device pixels wide. */
  drawRing(cam, b, worldPerPixel) {
    const gl = this.gl;
    const seg = 96;
    const w = worldPerPixel * 1.25;
    const data = new Float32Array((seg + 1) * 6);
    for (let i = 0; i <= seg; i++) {
      const [c, s] = outline(b.shape, (i / seg) * Math.PI * 2);
      data.set([b.pos[0] + c * (b.radius - w), b.pos[1] + s * (b.radius - w), 0, b.pos[0] + c * (b.radius + w), b.pos[1] + s * (b.radius + w), 0], i * 6);
    }
    const o = this.overlay;
    gl.bindVertexArray(o.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, o.vbo);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.DYNAMIC_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 12, 0);
    gl.useProgram(this.flat.p);
    gl.uniformMatrix4fv(this.flat.u.uViewProj, false, cam.viewProj);
    gl.uniform1i(this.flat.u.uUseVertexColor, 0);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    gl.disable(gl.DEPTH_TEST);
    const [r, g, bl] = hexToRgb(b.color);
    gl.uniform4fv(this.flat.u.uColor, [r, g, bl, 0.95]);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, (seg + 1) * 2);
    // a faint disc inside the ring
    const disc = new Float32Array((seg + 2) * 3);
    disc.set([b.pos[0], b.pos[1], 0], 0);
    for (let i = 0; i <= seg; i++) {
      const [c, s] = outline(b.shape, (i / seg) * Math.PI * 2);
      disc.set([b.pos[0] + c * b.radius, b.pos[1] + s * b.radius, 0], (i + 1) * 3);
    }
    gl.bufferData(gl.ARRAY_BUFFER, disc, gl.DYNAMIC_DRAW);
    gl.uniform4fv(this.flat.u.uColor, [r, g, bl, 0.12]);
    gl.drawArrays(gl.TRIANGLE_FAN, 0, seg + 2);
  }
}

export { hexToRgb, mat4 };
