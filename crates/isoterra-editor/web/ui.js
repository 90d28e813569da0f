// The HTML side of the editor: tool palette, brush sliders, tool options,
// status bar, toasts, the new-world dialog and the export menu. Text lives in
// the DOM (never in the canvas) so it stays sharp on any screen.

import { RecipeEditor } from './recipe.js';

const $ = (id) => document.getElementById(id);

const PRESETS = {
  map: ['island', 'plateaus', 'blank'],
  side2d: ['caves', 'hills', 'cellular'],
  heightmap: ['hills', 'mountains', 'islands'],
  voxel: ['caves', 'overhangs', 'planet', 'mesas'],
};
const DEFAULT_SIZE = { map: [256, 256], side2d: [256, 128] };

const EXPORT_LABELS = {
  glb: 'glTF binary (.glb)',
  obj: 'Wavefront OBJ',
  ply: 'PLY mesh',
  png: 'PNG image',
  png16: 'PNG 16-bit heightmap',
  r16: 'R16 raw heightmap',
  exr: 'EXR float heightmap',
  svg: 'SVG contours',
  tiled: 'Tiled map (JSON)',
  pathing: 'Pathing grid',
  'png-layers': 'PNG layer textures',
  'png-layers-sidecar': 'PNG layer sidecar (JSON)',
  'tiled-tileset': 'Tiled tileset image (PNG, save beside the map as map.tiles.png)',
  'tiled-zip': 'Tiled map with its tileset image (.zip)',
  'obj-mtl': 'OBJ materials (.mtl)',
  'obj-zip': 'Wavefront OBJ with the files beside it (.zip)',
  'glb-zip': 'glTF binary with its colliders (.zip)',
  'png-layers-zip': 'PNG layer textures with the sidecar (.zip)',
  colliders: 'Collider JSON',
  json: 'Collider JSON',
};

/** CSS colour of `[r, g, b(, a)]` bytes or a `#rrggbb` string. */
function cssColor(c) {
  if (typeof c === 'string') return c;
  if (Array.isArray(c) && c.length >= 3) return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
  return '#888';
}

function fmt(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

function isIntegerParam(p) {
  if (p.type && /^(int|integer|u8|u16|u32|i32|index|level|texture|material)$/i.test(p.type)) return true;
  if (p.step === 1 || p.integer === true) return true;
  const nums = [p.min, p.max, p.default].filter((x) => x !== undefined);
  return nums.length > 0 && nums.every(Number.isInteger) && (p.max ?? 0) - (p.min ?? 0) <= 64;
}

export class Ui {
  constructor() {
    this.tools = [];
    this.tool = null;
    this.limits = { radius: [0.5, 100], strength: [0, 1] };
    this.radius = 8;
    this.strength = 0.5;
    this.shape = 'circle';
    this.params = new Map(); // tool name -> {param name -> value}
    this.paramInputs = new Map();
    this.onUndo = null;
    this.onRedo = null;
    this.onChange = null;
    this.onNewWorld = null;
    this.kind = null;
    this.toastTimes = new Map();
    this.surfaceNormal = new Map();
    this.materials = null;

    $('undo').addEventListener('click', () => this.onUndo?.());
    $('redo').addEventListener('click', () => this.onRedo?.());
    $('size').addEventListener('input', () => {
      this.radius = this.sliderToRadius(+$('size').value);
      this.showBrushValues();
      this.onChange?.();
    });
    $('strength').addEventListener('input', () => {
      const [lo, hi] = this.limits.strength;
      this.strength = Math.round((lo + ((hi - lo) * +$('strength').value) / 1000) * 1000) / 1000;
      this.showBrushValues();
      this.onChange?.();
    });
    $('shape').addEventListener('change', () => {
      this.shape = $('shape').value;
      this.onChange?.();
    });
    // closing the export menu after a pick or a click elsewhere
    document.addEventListener('click', (ev) => {
      const menu = $('export-menu');
      if (menu.open && !menu.contains(ev.target)) menu.open = false;
    });
    $('export-list').addEventListener('click', () => {
      setTimeout(() => ($('export-menu').open = false), 0);
    });
    $('view-distance').addEventListener('input', () => {
      const v = +$('view-distance').value;
      $('view-distance-value').textContent = String(v);
      this.onViewDistance?.(v);
    });
    this.initDialog();
  }

  /** Shows the view-distance slider (free-fly views) or hides it (null). */
  setViewDistance(v, range) {
    $('view-distance-row').hidden = v === null;
    this.updateViewSection();
    if (v === null) return;
    const input = $('view-distance');
    if (Array.isArray(range)) {
      input.min = String(Math.max(16, range[0]));
      input.max = String(Math.min(2048, range[1]));
    }
    input.value = String(v);
    $('view-distance-value').textContent = String(Math.round(v));
  }

  updateViewSection() {
    $('view-section').hidden = $('view-distance-row').hidden && $('pathing-row').hidden;
  }

  /** Shows the pathing-overlay switch (map worlds) or hides it. */
  setPathingAvailable(on) {
    $('pathing-row').hidden = !on;
    if (!on) this.setPathingOverlay(false);
    this.updateViewSection();
  }

  setPathingOverlay(on) {
    $('pathing-overlay').checked = on;
    $('pathing-legend').hidden = !on;
  }

  // ------------------------------------------------------------ brush

  sliderToRadius(s) {
    const [lo, hi] = this.limits.radius;
    const r = lo * Math.pow(hi / lo, s / 1000);
    return Math.round(r * 10) / 10 >= lo ? Math.round(r * 10) / 10 : lo;
  }

  radiusToSlider(r) {
    const [lo, hi] = this.limits.radius;
    return Math.round((Math.log(r / lo) / Math.log(hi / lo)) * 1000);
  }

  setRadius(r) {
    const [lo, hi] = this.limits.radius;
    this.radius = Math.min(hi, Math.max(lo, Math.round(r * 10) / 10));
    $('size').value = String(this.radiusToSlider(this.radius));
    this.showBrushValues();
    this.onChange?.();
  }

  stepRadius(dir) {
    const f = dir > 0 ? 1.18 : 1 / 1.18;
    let r = this.radius * f;
    if (Math.abs(r - this.radius) < 0.1) r = this.radius + dir * 0.1;
    this.setRadius(r);
  }

  setStrength(s) {
    const [lo, hi] = this.limits.strength;
    this.strength = Math.min(hi, Math.max(lo, s));
    $('strength').value = String(Math.round(((this.strength - lo) / (hi - lo || 1)) * 1000));
    this.showBrushValues();
  }

  showBrushValues() {
    $('size-value').textContent = fmt(this.radius);
    $('strength-value').textContent = fmt(this.strength);
  }

  // ------------------------------------------------------------ tools

  setTools(tools, kind, limits, defaultRadius, shapes) {
    const sameKind = this.kind === kind;
    this.kind = kind;
    this.tools = tools;
    this.limits = {
      radius: Array.isArray(limits?.radius) ? limits.radius : [0.5, 100],
      strength: Array.isArray(limits?.strength) ? limits.strength : [0, 1],
    };
    const box = $('tools');
    box.replaceChildren();
    for (const t of tools) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'tool';
      b.dataset.tool = t.name;
      b.setAttribute('role', 'radio');
      b.setAttribute('aria-checked', 'false');
      b.style.setProperty('--tool-color', t.color ?? '#888');
      b.title = `${t.description || t.name}${t.key ? ` (key ${t.key})` : ''}`;
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = t.color ?? '#888';
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = t.name;
      b.append(sw, name);
      if (t.key) {
        const k = document.createElement('kbd');
        k.textContent = t.key;
        b.append(k);
      }
      b.addEventListener('click', () => this.selectTool(t.name));
      box.append(b);
    }
    if (!sameKind) {
      this.params.clear();
      this.setRadius(defaultRadius);
      this.setStrength((this.limits.strength[0] + this.limits.strength[1]) / 2);
    } else {
      this.setRadius(this.radius);
      this.setStrength(this.strength);
    }
    const shapeList = Array.isArray(shapes) && shapes.length ? shapes : null;
    this.shapes = shapeList;
    const keep = this.tool && tools.find((t) => t.name === this.tool.name);
    this.selectTool(keep ? keep.name : tools[0]?.name);
  }

  selectTool(name) {
    const t = this.tools.find((x) => x.name === name);
    if (!t) return;
    this.tool = t;
    for (const b of $('tools').children) b.setAttribute('aria-checked', String(b.dataset.tool === name));
    $('tool-help').textContent = t.description ?? '';
    document.documentElement.style.setProperty('--accent', t.color ?? '#4caf50');
    this.buildShapes(t);
    this.buildParams(t);
    this.onChange?.();
  }

  buildShapes(t) {
    const list = (Array.isArray(t.shapes) && t.shapes.length ? t.shapes : this.shapes) ?? null;
    const row = $('shape-row');
    const sel = $('shape');
    if (!list || list.length < 2) {
      row.hidden = true;
      this.shape = list?.[0] ?? 'circle';
      return;
    }
    row.hidden = false;
    sel.replaceChildren(...list.map((s) => new Option(s, s)));
    if (!list.includes(this.shape)) this.shape = list[0];
    sel.value = this.shape;
  }

  buildParams(t) {
    const box = $('params');
    box.replaceChildren();
    this.paramInputs.clear();
    const list = Array.isArray(t.params) ? t.params : [];
    $('params-section').hidden = list.length === 0;
    if (!this.params.has(t.name)) this.params.set(t.name, {});
    const values = this.params.get(t.name);
    for (const p of list) {
      if (!(p.name in values)) values[p.name] = p.default === undefined ? (p.type === 'bool' ? false : p.min ?? 0) : p.default;
      const control = this.paramControl(p, values);
      if (p.description) control.title = p.description;
      box.append(control);
    }
  }

  paramControl(p, values) {
    const options = p.options ?? p.values ?? p.choices;
    const label = p.label ?? p.name;
    const def = p.default;
    if (Array.isArray(options) && Array.isArray(values[p.name] ?? def)) return this.flagsControl(p, values, options, label);
    const boolOptions = Array.isArray(options) && options.length > 0 && options.every((o) => typeof o === 'boolean');
    if (Array.isArray(options) && !boolOptions) return this.selectControl(p, values, options.map((o) => [o, String(o)]), label);
    const table = p.name === 'material' ? this.materials : p.name === 'texture' ? this.textures : null;
    if (Array.isArray(table) && table.length) {
      const lo = Number.isFinite(p.min) ? p.min : 0;
      const hi = Number.isFinite(p.max) ? p.max : table.length - 1;
      const entries = [];
      for (let i = lo; i <= Math.min(hi, table.length - 1); i++) entries.push({ id: i, ...table[i] });
      if (entries.length) return this.swatchControl(p, values, entries, label);
    }
    if (boolOptions || typeof (values[p.name] ?? def) === 'boolean' || p.type === 'bool' || p.type === 'boolean') {
      const l = document.createElement('label');
      l.className = 'check';
      const c = document.createElement('input');
      c.type = 'checkbox';
      c.checked = !!values[p.name];
      c.addEventListener('change', () => (values[p.name] = c.checked));
      l.append(c, document.createTextNode(label));
      this.paramInputs.set(p.name, { set: (v) => ((c.checked = !!v), (values[p.name] = !!v)) });
      return l;
    }
    if (Array.isArray(def)) return this.vectorControl(p, values, label);
    const min = Number.isFinite(p.min) ? p.min : 0;
    const max = Number.isFinite(p.max) ? p.max : Math.max(1, min + 1);
    // seeds are whole numbers whatever their range
    const integer = isIntegerParam(p) || (p.name === 'seed' && Number.isInteger(min) && Number.isInteger(max));
    if (def === null || max - min > 1000) return this.numberControl(p, values, label, min, max, integer, def === null);
    // a number with a modest range: a slider
    const l = document.createElement('label');
    l.className = 'slider';
    const s = document.createElement('span');
    s.textContent = label;
    const out = document.createElement('output');
    const input = document.createElement('input');
    input.type = 'range';
    input.min = String(min);
    input.max = String(max);
    input.step = integer ? '1' : String(p.step ?? (max - min) / 200);
    input.value = String(values[p.name]);
    out.textContent = integer ? String(values[p.name]) : fmt(values[p.name]);
    input.addEventListener('input', () => {
      let v = +input.value;
      if (integer) v = Math.round(v);
      else v = Math.round(v * 1000) / 1000;
      values[p.name] = v;
      out.textContent = integer ? String(v) : fmt(v);
    });
    l.append(s, out, input);
    this.paramInputs.set(p.name, {
      set: (v) => {
        input.value = String(v);
        values[p.name] = v;
        out.textContent = integer ? String(v) : fmt(v);
      },
    });
    return l;
  }

  /** A row of coloured swatches, one per entry of the world's table. */
  swatchControl(p, values, entries, label) {
    const wrap = document.createElement('div');
    wrap.className = 'field';
    const title = document.createElement('span');
    const name = document.createElement('span');
    name.className = 'swatch-name';
    title.append(document.createTextNode(`${label}: `), name);
    const grid = document.createElement('div');
    grid.className = 'swatches';
    grid.setAttribute('role', 'radiogroup');
    grid.setAttribute('aria-label', label);
    const buttons = [];
    const show = () => {
      const e = entries.find((x) => x.id === values[p.name]);
      name.textContent = e ? `${e.id} · ${e.name}` : String(values[p.name]);
      for (const [id, b] of buttons) b.setAttribute('aria-pressed', String(id === values[p.name]));
    };
    for (const e of entries) {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.swatch = String(e.id);
      b.title = `${e.id} · ${e.name}`;
      b.setAttribute('aria-label', e.name);
      b.style.background = cssColor(e.color);
      b.addEventListener('click', () => {
        values[p.name] = e.id;
        show();
      });
      buttons.push([e.id, b]);
      grid.append(b);
    }
    wrap.append(title, grid);
    show();
    this.paramInputs.set(p.name, {
      set: (v) => {
        values[p.name] = v;
        show();
      },
    });
    return wrap;
  }

  flagsControl(p, values, options, label) {
    const wrap = document.createElement('div');
    const title = document.createElement('div');
    title.className = 'help';
    title.textContent = label;
    const checks = document.createElement('div');
    checks.className = 'checks';
    const boxes = [];
    for (const o of options) {
      const l = document.createElement('label');
      l.className = 'check';
      const c = document.createElement('input');
      c.type = 'checkbox';
      c.checked = values[p.name].includes(o);
      c.addEventListener('change', () => {
        const set = new Set(values[p.name]);
        if (c.checked) set.add(o);
        else set.delete(o);
        values[p.name] = options.filter((x) => set.has(x));
      });
      boxes.push([o, c]);
      l.append(c, document.createTextNode(String(o)));
      checks.append(l);
    }
    wrap.append(title, checks);
    this.paramInputs.set(p.name, {
      set: (v) => {
        values[p.name] = options.filter((x) => v.includes(x));
        for (const [o, c] of boxes) c.checked = v.includes(o);
      },
    });
    return wrap;
  }

  selectControl(p, values, opts, label) {
    const l = document.createElement('label');
    l.className = 'slider';
    const s = document.createElement('span');
    s.textContent = label;
    const sel = document.createElement('select');
    for (const [, text] of opts) sel.append(new Option(text, String(opts.findIndex((o) => o[1] === text))));
    const idx = () => String(Math.max(0, opts.findIndex((o) => String(o[0]) === String(values[p.name]))));
    sel.value = idx();
    values[p.name] = opts[+sel.value]?.[0] ?? values[p.name];
    sel.addEventListener('change', () => (values[p.name] = opts[+sel.value][0]));
    l.append(s, sel);
    this.paramInputs.set(p.name, {
      set: (v) => {
        values[p.name] = v;
        sel.value = idx();
      },
    });
    return l;
  }

  /** A number typed in; with `optional`, an "auto" box sends nothing. */
  numberControl(p, values, label, min, max, integer, optional) {
    const wrap = document.createElement('div');
    wrap.className = 'field';
    const s = document.createElement('span');
    s.textContent = label;
    const input = document.createElement('input');
    input.type = 'number';
    input.min = String(min);
    input.max = String(max);
    input.step = integer ? '1' : 'any';
    const read = () => {
      let v = +input.value;
      if (!Number.isFinite(v)) v = 0;
      v = Math.min(max, Math.max(min, integer ? Math.round(v) : v));
      return v;
    };
    let auto = null;
    if (optional) {
      const l = document.createElement('label');
      l.className = 'check';
      auto = document.createElement('input');
      auto.type = 'checkbox';
      auto.checked = values[p.name] === null || values[p.name] === undefined;
      l.append(auto, document.createTextNode('auto (where the stroke starts)'));
      auto.addEventListener('change', () => {
        input.disabled = auto.checked;
        values[p.name] = auto.checked ? null : read();
      });
      wrap.append(s, l);
    } else {
      wrap.append(s);
    }
    input.value = String(values[p.name] ?? 0);
    input.disabled = !!auto?.checked;
    input.addEventListener('change', () => {
      values[p.name] = read();
      input.value = String(values[p.name]);
    });
    wrap.append(input);
    this.paramInputs.set(p.name, {
      set: (v) => {
        values[p.name] = v;
        if (auto) auto.checked = v === null;
        input.disabled = v === null;
        if (v !== null) input.value = String(v);
      },
    });
    return wrap;
  }

  /** A vector (e.g. a plane normal); `normal` can follow the picked surface. */
  vectorControl(p, values, label) {
    const wrap = document.createElement('div');
    wrap.className = 'field';
    const s = document.createElement('span');
    s.textContent = label;
    wrap.append(s);
    const row = document.createElement('div');
    row.className = 'row';
    const inputs = values[p.name].map((v, i) => {
      const input = document.createElement('input');
      input.type = 'number';
      input.step = 'any';
      if (Number.isFinite(p.min)) input.min = String(p.min);
      if (Number.isFinite(p.max)) input.max = String(p.max);
      input.value = String(v);
      input.addEventListener('change', () => {
        const arr = [...values[p.name]];
        arr[i] = Number.isFinite(+input.value) ? +input.value : 0;
        values[p.name] = arr;
      });
      row.append(input);
      return input;
    });
    if (p.name === 'normal') {
      const l = document.createElement('label');
      l.className = 'check';
      const c = document.createElement('input');
      c.type = 'checkbox';
      c.checked = this.surfaceNormal.get(p.name) ?? true;
      const sync = () => {
        this.surfaceNormal.set(p.name, c.checked);
        for (const i of inputs) i.disabled = c.checked;
      };
      c.addEventListener('change', sync);
      sync();
      l.append(c, document.createTextNode('surface normal at the first dab'));
      wrap.append(l);
    }
    wrap.append(row);
    this.paramInputs.set(p.name, {
      set: (v) => {
        values[p.name] = v;
        v.forEach((x, i) => inputs[i] && (inputs[i].value = String(x)));
      },
    });
    return wrap;
  }

  setParam(name, value) {
    this.paramInputs.get(name)?.set(value);
  }

  /**
   * The current tool's parameters (only those it lists; optional ones left
   * on "auto" are left out). `hit` is where the stroke starts.
   */
  paramValues(hit) {
    if (!this.tool) return {};
    const values = this.params.get(this.tool.name) ?? {};
    const out = {};
    for (const p of this.tool.params ?? []) {
      if (!(p.name in values) || values[p.name] === null || values[p.name] === undefined) continue;
      out[p.name] = values[p.name];
      if (p.name === 'normal' && (this.surfaceNormal.get(p.name) ?? true) && hit?.normal) {
        out[p.name] = hit.normal.map((v) => Math.round(v * 10000) / 10000);
      }
    }
    return out;
  }

  // ------------------------------------------------------------ header / status

  setWorld(world, kind, exports) {
    this.materials = Array.isArray(world?.materials) ? world.materials : null;
    this.textures =
      Array.isArray(world?.textures) && Array.isArray(world?.texture_names)
        ? world.textures.map((color, i) => ({ color, name: world.texture_names[i] ?? `texture ${i}` }))
        : null;
    this.file = world?.file ?? 'world';
    $('world-name').textContent = world?.file ?? 'world';
    const size = Array.isArray(world?.size) ? ` · ${world.size.join('×')}` : '';
    const preset = world?.preset ? ` · ${world.preset}` : '';
    $('kind-badge').textContent = `${kind}${preset}${size}`;
    document.title = `${world?.file ?? 'world'} — isoterra`;
    const list = $('export-list');
    list.replaceChildren();
    for (const f of exports) {
      const a = document.createElement('a');
      a.href = `/export?format=${encodeURIComponent(f)}`;
      a.setAttribute('download', '');
      a.textContent = EXPORT_LABELS[f] ?? f;
      a.dataset.format = f;
      list.append(a);
    }
    if (!exports.length) {
      const p = document.createElement('div');
      p.className = 'help';
      p.textContent = 'no exports for this kind';
      list.append(p);
    }
    $('nw-kind').value = kind;
    this.fillPresets(kind, world?.preset);
  }

  setHelp(text) {
    $('help').textContent = text;
  }

  setHistory(h) {
    $('undo').disabled = !h.can_undo;
    $('redo').disabled = !h.can_redo;
    const n = h.strokes ?? 0;
    $('st-history').textContent = `${n} stroke${n === 1 ? '' : 's'}`;
  }

  setConnection(online) {
    const el = $('st-conn');
    el.textContent = online ? 'online' : 'offline';
    el.className = `st ${online ? 'online' : 'offline'}`;
  }

  setSaveState(state) {
    const el = $('st-save');
    el.textContent = state === 'saving' ? 'saving…' : state === 'queued' ? 'saving… (undo waits)' : 'saved';
    el.className = `st ${state}`;
  }

  setStatus(msg, pending) {
    if (Number.isFinite(msg.remesh_ms)) $('st-remesh').textContent = `remesh ${msg.remesh_ms.toFixed(1)} ms`;
    if (Number.isFinite(msg.clients)) $('st-clients').textContent = `${msg.clients} client${msg.clients === 1 ? '' : 's'}`;
    if (typeof msg.saved === 'boolean') this.setSaveState(msg.saved && !pending ? 'saved' : 'saving');
    this.clients = Number.isFinite(msg.clients) ? msg.clients : this.clients;
    this.wantedChunks = Number.isFinite(msg.wanted) ? msg.wanted : null;
  }

  /** Forgets what the server said about the previous world. */
  resetStatus() {
    this.wantedChunks = null;
  }

  setCounters({ chunks, tris, fps, scale }) {
    // "shown / wanted" only once the server has said how many it will send
    const wanted = this.wantedChunks > 0 ? ` / ${this.wantedChunks}` : '';
    $('st-chunks').textContent = `chunks ${chunks}${wanted}`;
    $('st-tris').textContent = `${tris >= 1e6 ? (tris / 1e6).toFixed(2) + 'M' : tris >= 1e3 ? (tris / 1e3).toFixed(1) + 'k' : tris} tris`;
    const res = scale < 1 ? ` · ${Math.round(scale * 100)}% res` : '';
    $('st-fps').textContent = (fps > 0 ? `${fps} fps` : 'idle') + res;
    $('st-fps').title =
      'frames drawn in the last second (the view redraws only when something changes); on a slow GPU the view draws at a lower resolution while it moves, and sharp again once it stops';
  }

  setCursor(p) {
    $('st-cursor').textContent = p ? `x ${p[0].toFixed(1)}  y ${p[1].toFixed(1)}  z ${p[2].toFixed(1)}` : '';
  }

  overlay(text) {
    const el = $('overlay-msg');
    el.hidden = !text;
    if (text) el.textContent = text;
  }

  fatal(text) {
    this.overlay(text);
  }

  toast(code, message, kind = 'error') {
    const key = `${code}:${message}`;
    const now = performance.now();
    if (now - (this.toastTimes.get(key) ?? -1e9) < 1500) return;
    this.toastTimes.set(key, now);
    const box = $('toasts');
    while (box.children.length >= 5) box.firstChild.remove();
    const t = document.createElement('div');
    t.className = `toast ${kind}`;
    t.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    const c = document.createElement('span');
    c.className = 'code';
    c.textContent = code;
    t.append(c, document.createTextNode(message));
    box.append(t);
    setTimeout(() => {
      t.style.opacity = '0';
      setTimeout(() => t.remove(), 400);
    }, 6000);
  }

  // ------------------------------------------------------------ keyboard help

  /** Fills and opens the keyboard help; closes it when open. */
  toggleKeys(cameraHelp, extra) {
    const dlg = $('keys-dialog');
    if (dlg.open) {
      dlg.close();
      return false;
    }
    const table = $('keys-table');
    table.replaceChildren();
    const section = (title) => {
      const tr = document.createElement('tr');
      const th = document.createElement('th');
      th.colSpan = 2;
      th.textContent = title;
      tr.append(th);
      table.append(tr);
    };
    const row = (keys, what) => {
      const tr = document.createElement('tr');
      const k = document.createElement('td');
      for (const key of keys) {
        const kbd = document.createElement('kbd');
        kbd.textContent = key;
        k.append(kbd, document.createTextNode(' '));
      }
      const w = document.createElement('td');
      w.textContent = what;
      tr.append(k, w);
      table.append(tr);
    };
    section('Tools');
    for (const t of this.tools) if (t.key) row([t.key], `${t.name}: ${t.description ?? ''}`);
    section('Brush and history');
    row(['[', ']'], 'smaller / larger brush');
    row(['Ctrl+Z'], 'undo (waits for a stroke that is still being saved)');
    row(['Ctrl+Shift+Z', 'Ctrl+Y'], 'redo');
    section('View');
    for (const part of cameraHelp.split(' · ')) {
      const i = part.indexOf(':');
      if (i > 0) row([part.slice(0, i)], part.slice(i + 1).trim());
    }
    row(['Home'], 'reset the view');
    for (const [k, what] of extra) row([k], what);
    row(['?'], 'this help (Esc closes it)');
    dlg.showModal();
    return true;
  }

  // ------------------------------------------------------------ new world

  fillPresets(kind, current) {
    const sel = $('nw-preset');
    const list = PRESETS[kind] ?? [];
    sel.replaceChildren(...list.map((p) => new Option(p, p)));
    if (current && list.includes(current)) sel.value = current;
    $('nw-size-row').hidden = !(kind in DEFAULT_SIZE);
  }

  /** Kind, seed and size as the dialog has them now. */
  dialogWorld() {
    const kind = $('nw-kind').value;
    const seed = Math.max(0, Math.floor(+$('nw-seed').value || 0));
    const w = { kind, seed };
    if (!$('nw-size-row').hidden) {
      const d = DEFAULT_SIZE[kind] ?? [256, 256];
      w.size = [Math.floor(+$('nw-w').value || d[0]), Math.floor(+$('nw-h').value || d[1])];
    }
    return w;
  }

  /** Loads a preset's recipe into the generator panel; `resetSize` puts
   *  the kind's default size in the size fields. */
  loadRecipe(kind, preset, resetSize) {
    this.recipeLoad = this.recipe
      .load(kind, preset)
      .then((data) => {
        if (!data) return;
        const sel = $('nw-preset');
        sel.replaceChildren(...data.presets.map((p) => new Option(p, p)));
        sel.value = data.preset;
        $('nw-size-row').hidden = !data.size;
        if (data.size_range) {
          for (const id of ['nw-w', 'nw-h']) {
            $(id).min = String(data.size_range[0]);
            $(id).max = String(data.size_range[1]);
          }
        }
        if (data.size && resetSize) {
          $('nw-w').value = String(data.size[0]);
          $('nw-h').value = String(data.size[1]);
          this.recipe.schedule();
        }
      })
      .catch((e) => this.toast('error', `cannot load the generator: ${e.message}`));
    return this.recipeLoad;
  }

  initDialog() {
    const dlg = $('new-world-dialog');
    this.recipe = new RecipeEditor({
      fields: $('nw-fields'),
      img: $('nw-preview'),
      info: $('nw-preview-info'),
      area: $('nw-area'),
      world: () => this.dialogWorld(),
    });
    this.recipeLoad = Promise.resolve();
    $('new-world').addEventListener('click', () => {
      dlg.returnValue = '';
      dlg.showModal();
      this.loadRecipe($('nw-kind').value, $('nw-preset').value || null, false);
    });
    $('nw-kind').addEventListener('change', () => {
      const kind = $('nw-kind').value;
      this.fillPresets(kind, null);
      this.loadRecipe(kind, null, true);
    });
    $('nw-preset').addEventListener('change', () => this.loadRecipe($('nw-kind').value, $('nw-preset').value, false));
    for (const id of ['nw-seed', 'nw-w', 'nw-h']) $(id).addEventListener('input', () => this.recipe.schedule());
    dlg.addEventListener('close', async () => {
      if (dlg.returnValue !== 'create') return;
      // A preset picked just before "Create" may still be loading.
      await this.recipeLoad;
      const world = this.dialogWorld();
      const spec = { ...world, recipe: this.recipe.current() };
      const what = this.recipe.modified ? `a recipe edited from ${this.recipe.preset}` : this.recipe.preset;
      const seed = world.seed;
      const kind = world.kind;
      // Replacing the world changes it for every window: ask first.
      const n = Number.isFinite(this.clients) ? this.clients : 1;
      const others = n > 1 ? `${n - 1} other editor window${n === 2 ? ' is' : 's are'} connected to it and will switch too.` : 'No other editor window is connected to it.';
      $('confirm-text').textContent =
        `This replaces ${this.file ?? 'the open world'} with a new ${kind} world (${what}, seed ${seed}). ` +
        `The current file is kept as a backup next to it. ${others}`;
      const confirm = $('confirm-dialog');
      confirm.returnValue = '';
      confirm.onclose = () => {
        if (confirm.returnValue === 'replace') this.onNewWorld?.(spec);
      };
      confirm.showModal();
    });
  }
}
