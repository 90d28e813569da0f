//! Tiled XML (`.tmx` maps, `.tsx` tilesets) read into the shape of Tiled
//! JSON, so that one reader handles both: a `<map>` becomes the object of a
//! `.tmj` file, a `<tileset>` the object of a `.tsj` file.
//!
//! Only what the import reads is converted: the map's orientation, size and
//! properties; tile layers (finite or chunked, CSV, base64 with any
//! compression, or the old `<tile gid>` list) and groups of them; tilesets
//! (embedded, or external by `source`) with their tiles' properties. Object
//! and image layers become layers of their own type, which the import skips.

use roxmltree::{Document, Node, ParsingOptions};
use serde_json::{Map, Value, json};

use crate::ExportError;

/// Elements a TMX document may hold: a full 4096 x 4096 map in the old
/// `<tile gid>` form is 16.8 M nodes; more than this is refused before it
/// can take the memory of a DOM.
const MAX_NODES: u32 = 20_000_000;

fn xerr(msg: impl Into<String>) -> ExportError {
    ExportError::TiledXml(msg.into())
}

/// Whether `bytes` look like XML (after an optional byte-order mark and
/// white space, the first character is `<`) rather than JSON.
pub(crate) fn looks_like_xml(bytes: &[u8]) -> bool {
    let b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    b.iter()
        .find(|c| !c.is_ascii_whitespace())
        .is_some_and(|&c| c == b'<')
}

fn parse(xml: &[u8]) -> Result<Document<'_>, ExportError> {
    let text = std::str::from_utf8(xml).map_err(|e| xerr(format!("not UTF-8: {e}")))?;
    let opts = ParsingOptions {
        nodes_limit: MAX_NODES,
        ..ParsingOptions::default()
    };
    Document::parse_with_options(text, opts).map_err(|e| xerr(e.to_string()))
}

/// A `.tmx` map as the JSON object of the same map.
pub(crate) fn tmx_to_json(xml: &[u8]) -> Result<Map<String, Value>, ExportError> {
    let doc = parse(xml)?;
    let root = doc.root_element();
    if root.tag_name().name() != "map" {
        return Err(xerr(format!(
            "the root element is <{}>, expected <map>",
            root.tag_name().name()
        )));
    }
    let mut m = Map::new();
    m.insert("type".into(), json!("map"));
    if let Some(o) = root.attribute("orientation") {
        m.insert("orientation".into(), json!(o));
    }
    for key in ["width", "height", "tilewidth", "tileheight"] {
        if let Some(v) = root.attribute(key) {
            m.insert(key.into(), json!(uint(v, "map", key)?));
        }
    }
    m.insert(
        "infinite".into(),
        json!(root.attribute("infinite") == Some("1")),
    );
    let mut tilesets = Vec::new();
    for c in root.children().filter(Node::is_element) {
        match c.tag_name().name() {
            "properties" => {
                m.insert("properties".into(), properties(c)?);
            }
            "tileset" => tilesets.push(Value::Object(tileset(c)?)),
            _ => {}
        }
    }
    m.insert("tilesets".into(), Value::Array(tilesets));
    m.insert("layers".into(), Value::Array(layers(root)?));
    Ok(m)
}

/// A `.tsx` tileset as the JSON object of the same tileset.
pub(crate) fn tsx_to_json(xml: &[u8]) -> Result<Map<String, Value>, ExportError> {
    let doc = parse(xml)?;
    let root = doc.root_element();
    if root.tag_name().name() != "tileset" {
        return Err(xerr(format!(
            "the root element is <{}>, expected <tileset>",
            root.tag_name().name()
        )));
    }
    let mut t = tileset(root)?;
    t.insert("type".into(), json!("tileset"));
    Ok(t)
}

fn uint(v: &str, what: &str, key: &str) -> Result<u64, ExportError> {
    v.trim().parse().map_err(|_| {
        xerr(format!(
            "<{what}> attribute {key}={v:?} is not a non-negative integer"
        ))
    })
}

fn int(v: &str, what: &str, key: &str) -> Result<i64, ExportError> {
    v.trim()
        .parse()
        .map_err(|_| xerr(format!("<{what}> attribute {key}={v:?} is not an integer")))
}

/// `<properties>` as Tiled JSON's array of `{name, type, value}`.
fn properties(node: Node) -> Result<Value, ExportError> {
    let mut out = Vec::new();
    for p in node
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "property")
    {
        let name = p.attribute("name").unwrap_or("");
        let ty = p.attribute("type").unwrap_or("string");
        // Multi-line strings are the element's text instead of `value`.
        let raw = p.attribute("value").or_else(|| p.text()).unwrap_or("");
        let value = match ty {
            "int" | "object" => raw
                .trim()
                .parse::<i64>()
                .map(|i| json!(i))
                .unwrap_or_else(|_| json!(raw)),
            "float" => raw
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| json!(f))
                .unwrap_or_else(|| json!(raw)),
            "bool" => json!(raw.trim() == "true" || raw.trim() == "1"),
            _ => json!(raw),
        };
        out.push(json!({ "name": name, "type": ty, "value": value }));
    }
    Ok(Value::Array(out))
}

fn tileset(node: Node) -> Result<Map<String, Value>, ExportError> {
    let mut t = Map::new();
    if let Some(g) = node.attribute("firstgid") {
        t.insert("firstgid".into(), json!(uint(g, "tileset", "firstgid")?));
    }
    if let Some(s) = node.attribute("source") {
        t.insert("source".into(), json!(s));
        return Ok(t);
    }
    if let Some(n) = node.attribute("name") {
        t.insert("name".into(), json!(n));
    }
    let mut tiles = Vec::new();
    for c in node.children().filter(Node::is_element) {
        match c.tag_name().name() {
            "tile" => {
                let id = uint(c.attribute("id").unwrap_or(""), "tile", "id")?;
                let mut tile = Map::new();
                tile.insert("id".into(), json!(id));
                if let Some(class) = c.attribute("type").or_else(|| c.attribute("class")) {
                    tile.insert("type".into(), json!(class));
                }
                if let Some(p) = c
                    .children()
                    .find(|n| n.is_element() && n.tag_name().name() == "properties")
                {
                    tile.insert("properties".into(), properties(p)?);
                }
                tiles.push(Value::Object(tile));
            }
            "properties" => {
                t.insert("properties".into(), properties(c)?);
            }
            _ => {}
        }
    }
    t.insert("tiles".into(), Value::Array(tiles));
    Ok(t)
}

/// The layers among `parent`'s children, in document order.
fn layers(parent: Node) -> Result<Vec<Value>, ExportError> {
    let mut out = Vec::new();
    for c in parent.children().filter(Node::is_element) {
        let name = c.attribute("name").unwrap_or("");
        match c.tag_name().name() {
            "layer" => out.push(Value::Object(tile_layer(c)?)),
            "group" => out.push(json!({
                "type": "group",
                "name": name,
                "layers": layers(c)?,
            })),
            "objectgroup" => out.push(json!({ "type": "objectgroup", "name": name })),
            "imagelayer" => out.push(json!({ "type": "imagelayer", "name": name })),
            _ => {}
        }
    }
    Ok(out)
}

fn tile_layer(node: Node) -> Result<Map<String, Value>, ExportError> {
    let mut l = Map::new();
    l.insert("type".into(), json!("tilelayer"));
    l.insert("name".into(), json!(node.attribute("name").unwrap_or("")));
    for key in ["width", "height"] {
        if let Some(v) = node.attribute(key) {
            l.insert(key.into(), json!(uint(v, "layer", key)?));
        }
    }
    let Some(data) = node
        .children()
        .find(|n| n.is_element() && n.tag_name().name() == "data")
    else {
        // A layer without data is empty.
        l.insert("chunks".into(), json!([]));
        return Ok(l);
    };
    let encoding = data.attribute("encoding").unwrap_or("");
    let compression = data.attribute("compression").unwrap_or("");
    if encoding == "base64" {
        l.insert("encoding".into(), json!("base64"));
        l.insert("compression".into(), json!(compression));
    } else if !compression.is_empty() {
        return Err(ExportError::TiledCompression(format!(
            "compression {compression:?} with encoding {encoding:?}"
        )));
    }
    let chunks: Vec<Node> = data
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "chunk")
        .collect();
    let infinite_map = node
        .ancestors()
        .find(|n| n.has_tag_name("map"))
        .and_then(|m| m.attribute("infinite"))
        == Some("1");
    if !chunks.is_empty() || infinite_map {
        let mut out = Vec::with_capacity(chunks.len());
        for c in chunks {
            let mut o = Map::new();
            for key in ["x", "y"] {
                o.insert(
                    key.into(),
                    json!(int(c.attribute(key).unwrap_or(""), "chunk", key)?),
                );
            }
            for key in ["width", "height"] {
                o.insert(
                    key.into(),
                    json!(uint(c.attribute(key).unwrap_or(""), "chunk", key)?),
                );
            }
            o.insert("data".into(), data_value(c, encoding)?);
            out.push(Value::Object(o));
        }
        l.insert("chunks".into(), Value::Array(out));
    } else {
        l.insert("data".into(), data_value(data, encoding)?);
    }
    Ok(l)
}

/// The gids of a `<data>` or `<chunk>`: a JSON array for CSV and the
/// `<tile>` list, the base64 text as a string.
fn data_value(node: Node, encoding: &str) -> Result<Value, ExportError> {
    match encoding {
        "csv" => {
            let text = node.text().unwrap_or("");
            let mut gids = Vec::new();
            for tok in text.split(',') {
                let tok = tok.trim();
                if tok.is_empty() {
                    continue;
                }
                let g: u32 = tok
                    .parse()
                    .map_err(|_| xerr(format!("CSV tile {tok:?} is not a 32-bit gid")))?;
                gids.push(g);
            }
            Ok(json!(gids))
        }
        "base64" => Ok(json!(node.text().unwrap_or("").trim())),
        "" => {
            let mut gids = Vec::new();
            for t in node
                .children()
                .filter(|n| n.is_element() && n.tag_name().name() == "tile")
            {
                let g = match t.attribute("gid") {
                    Some(g) => u32::try_from(uint(g, "tile", "gid")?)
                        .map_err(|_| xerr(format!("<tile gid={g:?}> is not a 32-bit gid")))?,
                    None => 0,
                };
                gids.push(g);
            }
            Ok(json!(gids))
        }
        e => Err(ExportError::TiledCompression(format!("encoding {e:?}"))),
    }
}
