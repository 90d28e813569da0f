// The recipe panel of the new-world dialog: every generator parameter of a
// kind as a control (sliders with their ranges, pickers, a curve editor),
// built from the field list the server sends with the preset's recipe, and a
// live preview the server draws while the user drags.

const SLIDER_STEPS = 1000;

/** Reads `path` ("base.basis.type") out of `obj`. */
function getPath(obj, path) {
  let o = obj;
  for (const k of path.split('.')) {
    if (o == null || typeof o !== 'object') return undefined;
    o = o[k];
  }
  return o;
}

/** Writes `value` at `path` in `obj` (undefined deletes it). */
function setPath(obj, path, value) {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (o[k] == null || typeof o[k] !== 'object') o[k] = {};
    o = o[k];
  }
  const last = keys[keys.length - 1];
  if (value === undefined) delete o[last];
  else o[last] = value;
}

function inside(b, v) {
  if (!Number.isFinite(v)) return false;
  const lo = b.open[0] ? v > b.min : v >= b.min;
  const hi = b.open[1] ? v < b.max : v <= b.max;
  return lo && hi;
}

function rangeText(b) {
  return `${b.open[0] ? '(' : '['}${b.min}, ${b.max}${b.open[1] ? ')' : ']'}`;
}

/** Three significant digits, as a number. */
function round3(v) {
  if (v === 0 || !Number.isFinite(v)) return v;
  const d = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(v))));
  return +v.toFixed(Math.min(d, 8));
}

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k in e) e[k] = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

export class RecipeEditor {
  /**
   * `fields`: the element the controls go in; `img`: the preview image;
   * `info`: the line under it; `world()` gives {kind, seed, size} of the
   * dialog; `area`: the preview-area select (endless kinds).
   */
  constructor({ fields, img, info, area, world }) {
    this.fieldsEl = fields;
    this.img = img;
    this.info = info;
    this.areaSel = area;
    this.world = world;
    this.kind = null;
    this.preset = null;
    this.recipe = null;
    this.fields = [];
    this.modified = false;
    this.rows = new Map();
    this.inFlight = false;
    this.dirty = false;
    this.url = null;
    this.loadSeq = 0;
    // For tests and the status line.
    this.previews = 0;
    this.lastMs = null;
    this.lastError = null;
    this.areaSel.addEventListener('change', () => this.schedule());
  }

  /** Loads `preset`'s recipe of `kind` and builds its controls. */
  async load(kind, preset) {
    const seq = ++this.loadSeq;
    const q = new URLSearchParams({ kind });
    if (preset) q.set('preset', preset);
    const r = await fetch(`api/recipe?${q}`);
    const data = await r.json();
    if (seq !== this.loadSeq) return null;
    if (!r.ok) throw new Error(data.message ?? `recipe: HTTP ${r.status}`);
    this.kind = kind;
    this.preset = data.preset;
    this.recipe = data.recipe;
    this.fields = data.fields;
    this.modified = false;
    this.build();
    this.areaSel.closest('label').hidden = !(kind === 'heightmap' || kind === 'voxel');
    this.schedule();
    return data;
  }

  /** The recipe to create the world from (named after its preset while
   *  nothing was changed). */
  current() {
    const r = structuredClone(this.recipe);
    if (this.modified) delete r.name;
    return r;
  }

  build() {
    this.rows.clear();
    const groups = new Map();
    for (const f of this.fields) {
      if (!groups.has(f.group)) groups.set(f.group, []);
      groups.get(f.group).push(f);
    }
    const sets = [];
    for (const [name, list] of groups) {
      const fs = el('fieldset', { class: 'recipe-group' }, el('legend', {}, name));
      for (const f of list) {
        const row = this.control(f);
        this.rows.set(f.path, { field: f, row });
        fs.append(row.el);
      }
      sets.push(fs);
    }
    this.fieldsEl.replaceChildren(...sets);
    this.refreshWhen();
  }

  /** Shows the fields whose condition holds, and those of the optional
   *  parts (toggles) that are on. */
  refreshWhen() {
    for (const { field, row } of this.rows.values()) {
      if (field.within) {
        const on = getPath(this.recipe.params, field.within) != null;
        row.el.hidden = !on;
        if (on) row.show();
        continue;
      }
      if (!field.when) continue;
      const on = getPath(this.recipe.params, field.when[0]) === field.when[1];
      row.el.hidden = !on;
      if (on && getPath(this.recipe.params, field.path) === undefined) {
        setPath(this.recipe.params, field.path, structuredClone(field.initial));
        row.show();
      } else if (!on) {
        setPath(this.recipe.params, field.path, undefined);
      }
    }
  }

  changed(path, value) {
    setPath(this.recipe.params, path, value);
    this.modified = true;
    this.refreshWhen();
    this.schedule();
  }

  control(f) {
    const c = f.control;
    const id = `rf-${f.path.replaceAll('.', '-')}`;
    const label = el('span', { class: 'rf-label', title: f.help }, f.label);
    if (c.type === 'choice') {
      const sel = el('select', { id, title: f.help }, ...c.options.map((o) => new Option(o, o)));
      const show = () => {
        const v = getPath(this.recipe.params, f.path);
        if (v !== undefined) sel.value = v;
      };
      sel.addEventListener('change', () => this.changed(f.path, sel.value));
      show();
      return { el: el('label', { class: 'rf-row' }, label, sel), show };
    }
    if (c.type === 'toggle') {
      const box = el('input', { id, type: 'checkbox', title: f.help });
      const show = () => {
        box.checked = getPath(this.recipe.params, f.path) != null;
      };
      box.addEventListener('change', () =>
        this.changed(f.path, box.checked ? structuredClone(c.initial) : undefined),
      );
      show();
      return { el: el('label', { class: 'rf-row' }, label, box), show };
    }
    if (c.type === 'curve') return this.curveControl(f, label);
    const integer = c.type === 'integer';
    const [s0, s1] = c.slider;
    const log = !!c.log;
    const toPos = (v) => {
      const t = log ? Math.log(v / s0) / Math.log(s1 / s0) : (v - s0) / (s1 - s0);
      return Math.round(Math.min(1, Math.max(0, t)) * SLIDER_STEPS);
    };
    const fromPos = (p) => {
      const t = p / SLIDER_STEPS;
      const v = log ? s0 * Math.pow(s1 / s0, t) : s0 + (s1 - s0) * t;
      return integer ? Math.round(v) : round3(v);
    };
    const slider = integer
      ? el('input', { type: 'range', min: s0, max: s1, step: 1, title: f.help })
      : el('input', { type: 'range', min: 0, max: SLIDER_STEPS, step: 1, title: f.help });
    const num = el('input', { id, type: 'number', step: 'any', class: 'rf-num', title: f.help });
    const ok = (v) => (integer ? Number.isInteger(v) && v >= c.min && v <= c.max : inside(c.bounds, v));
    const show = () => {
      const v = getPath(this.recipe.params, f.path);
      if (v === undefined) return;
      num.value = String(v);
      slider.value = String(integer ? v : toPos(v));
      num.classList.remove('invalid');
    };
    slider.addEventListener('input', () => {
      const v = integer ? +slider.value : fromPos(+slider.value);
      num.value = String(v);
      num.classList.remove('invalid');
      this.changed(f.path, v);
    });
    num.addEventListener('input', () => {
      const v = +num.value;
      if (num.value.trim() === '' || !ok(v)) {
        num.classList.add('invalid');
        num.title = integer ? `a whole number in ${c.min}..${c.max}` : `a number in ${rangeText(c.bounds)}`;
        return;
      }
      num.classList.remove('invalid');
      num.title = f.help;
      slider.value = String(integer ? v : toPos(v));
      this.changed(f.path, v);
    });
    show();
    return { el: el('label', { class: 'rf-row' }, label, slider, num), show };
  }

  /** A small editor of the height curve: drag points (x stays between its
   *  neighbours), double-click to add one, right-click to remove one. */
  curveControl(f, label) {
    const c = f.control;
    const W = 240;
    const H = 120;
    const canvas = el('canvas', { id: 'rf-curve', width: W, height: H, class: 'rf-curve', title: f.help + ' Drag a point; double-click adds one, right-click removes one.' });
    const pad = 8;
    const pts = () => getPath(this.recipe.params, f.path);
    const yRange = () => {
      const ys = pts().map((p) => p[1]);
      return [Math.min(0, ...ys), Math.max(1, ...ys)];
    };
    const toPx = ([x, y]) => {
      const [y0, y1] = yRange();
      return [pad + x * (W - 2 * pad), H - pad - ((y - y0) / (y1 - y0)) * (H - 2 * pad)];
    };
    const fromPx = (px, py, yr) => {
      const [y0, y1] = yr;
      return [(px - pad) / (W - 2 * pad), y0 + ((H - pad - py) / (H - 2 * pad)) * (y1 - y0)];
    };
    const draw = () => {
      const g = canvas.getContext('2d');
      g.clearRect(0, 0, W, H);
      g.strokeStyle = 'rgba(255,255,255,0.15)';
      g.strokeRect(pad, pad, W - 2 * pad, H - 2 * pad);
      const p = pts();
      g.strokeStyle = '#8bc34a';
      g.lineWidth = 2;
      g.beginPath();
      p.forEach((q, i) => {
        const [x, y] = toPx(q);
        if (i === 0) g.moveTo(x, y);
        else g.lineTo(x, y);
      });
      g.stroke();
      g.fillStyle = '#e0e0e0';
      for (const q of p) {
        const [x, y] = toPx(q);
        g.beginPath();
        g.arc(x, y, 4, 0, Math.PI * 2);
        g.fill();
      }
    };
    const nearest = (ev) => {
      const r = canvas.getBoundingClientRect();
      const mx = ((ev.clientX - r.left) * W) / r.width;
      const my = ((ev.clientY - r.top) * H) / r.height;
      let best = -1;
      let bd = 10 * 10;
      pts().forEach((q, i) => {
        const [x, y] = toPx(q);
        const d = (x - mx) ** 2 + (y - my) ** 2;
        if (d < bd) {
          bd = d;
          best = i;
        }
      });
      return { i: best, mx, my };
    };
    let drag = null;
    canvas.addEventListener('pointerdown', (ev) => {
      if (ev.button !== 0) return;
      const { i } = nearest(ev);
      if (i < 0) return;
      drag = { i, yr: yRange() };
      canvas.setPointerCapture(ev.pointerId);
    });
    canvas.addEventListener('pointermove', (ev) => {
      if (!drag) return;
      const { mx, my } = nearest(ev);
      const p = pts().map((q) => [...q]);
      let [x, y] = fromPx(mx, my, drag.yr);
      const i = drag.i;
      const eps = 1e-3;
      const lo = i > 0 ? p[i - 1][0] + eps : -Infinity;
      const hi = i + 1 < p.length ? p[i + 1][0] - eps : Infinity;
      // The end points keep their x (the curve spans the whole range).
      if (i === 0 || i === p.length - 1) x = p[i][0];
      x = Math.min(hi, Math.max(lo, x));
      y = Math.min(c.y.max, Math.max(c.y.min, y));
      p[i] = [round3(x), round3(y)];
      this.changed(f.path, p);
      draw();
    });
    const end = () => {
      drag = null;
    };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
    canvas.addEventListener('dblclick', (ev) => {
      const p = pts().map((q) => [...q]);
      if (p.length >= c.points[1]) return;
      const { mx, my } = nearest(ev);
      const [x, y] = fromPx(mx, my, yRange());
      const k = p.findIndex((q) => q[0] > x);
      if (k <= 0) return;
      if (x - p[k - 1][0] < 2e-3 || p[k][0] - x < 2e-3) return;
      p.splice(k, 0, [round3(x), round3(y)]);
      this.changed(f.path, p);
      draw();
    });
    canvas.addEventListener('contextmenu', (ev) => {
      ev.preventDefault();
      const p = pts().map((q) => [...q]);
      const { i } = nearest(ev);
      if (i <= 0 || i >= p.length - 1 || p.length <= c.points[0]) return;
      p.splice(i, 1);
      this.changed(f.path, p);
      draw();
    });
    draw();
    const row = el('div', { class: 'rf-row rf-curve-row' }, label, canvas);
    return { el: row, show: draw };
  }

  /** Asks for a new preview now, or once the one in flight is back. */
  schedule() {
    if (!this.recipe) return;
    if (this.inFlight) {
      this.dirty = true;
      return;
    }
    this.send();
  }

  async send() {
    this.inFlight = true;
    this.dirty = false;
    const w = this.world();
    const body = { kind: this.kind, seed: w.seed, recipe: this.current() };
    if (w.size) body.size = w.size;
    if (!this.areaSel.closest('label').hidden && this.areaSel.value !== 'auto') body.area = +this.areaSel.value;
    const t0 = performance.now();
    try {
      const r = await fetch('api/preview', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (r.ok) {
        const blob = await r.blob();
        const ms = performance.now() - t0;
        if (this.url) URL.revokeObjectURL(this.url);
        this.url = URL.createObjectURL(blob);
        this.img.src = this.url;
        this.previews += 1;
        this.lastMs = ms;
        this.lastError = null;
        const area = +(r.headers.get('x-preview-area') ?? 0);
        this.info.textContent = `${r.headers.get('x-preview-width')}×${r.headers.get('x-preview-height')} px · ${Math.round(area)} units across · ${Math.round(ms)} ms`;
        this.info.classList.remove('invalid');
      } else {
        const e = await r.json().catch(() => ({}));
        this.lastError = e.message ?? `HTTP ${r.status}`;
        this.info.textContent = this.lastError;
        this.info.classList.add('invalid');
      }
    } catch (e) {
      this.lastError = String(e);
      this.info.textContent = this.lastError;
      this.info.classList.add('invalid');
    } finally {
      this.inFlight = false;
      if (this.dirty) this.send();
    }
  }
}
