//! Client messages: parsing and the checks every value goes through.

use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Largest `req` / `stroke` id, in characters.
const MAX_ID_CHARS: usize = 64;

/// A client message, parsed but not yet checked against the world.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClientMsg {
    Hello,
    Camera {
        position: [f64; 3],
        forward: Option<[f64; 3]>,
        view_distance: Option<f64>,
    },
    StrokeBegin(StrokeBegin),
    Dab {
        stroke: String,
        at: [f64; 3],
    },
    StrokeEnd {
        stroke: String,
    },
    Undo,
    Redo,
    NewWorld(NewWorld),
}

impl ClientMsg {
    /// The message's `type`.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            ClientMsg::Hello => "hello",
            ClientMsg::Camera { .. } => "camera",
            ClientMsg::StrokeBegin(_) => "stroke_begin",
            ClientMsg::Dab { .. } => "dab",
            ClientMsg::StrokeEnd { .. } => "stroke_end",
            ClientMsg::Undo => "undo",
            ClientMsg::Redo => "redo",
            ClientMsg::NewWorld(_) => "new_world",
        }
    }
}

/// `stroke_begin`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct StrokeBegin {
    pub stroke: String,
    pub tool: String,
    pub radius: f64,
    pub strength: f64,
    #[serde(default)]
    pub shape: Option<String>,
    #[serde(default)]
    pub params: Option<Map<String, Value>>,
}

/// `new_world`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct NewWorld {
    pub kind: String,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub size: Option<[u32; 2]>,
    #[serde(default)]
    pub preset: Option<String>,
    /// The generator in full (a recipe document, as `isoterra recipe`
    /// prints it); it replaces the preset.
    #[serde(default)]
    pub recipe: Option<Value>,
}

/// An error reply: code and message (the `req` and `stroke` are added by
/// the sender).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reject {
    pub code: &'static str,
    pub message: String,
}

impl Reject {
    pub fn bad_message(message: impl Into<String>) -> Self {
        Reject {
            code: "bad_message",
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Reject {
            code: "invalid_parameter",
            message: message.into(),
        }
    }

    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Reject {
            code,
            message: message.into(),
        }
    }
}

/// Parses a text message into the message and its `req`.
pub(crate) fn parse(text: &str) -> (Option<String>, Result<ClientMsg, Reject>) {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return (None, Err(Reject::bad_message(format!("not JSON: {e}")))),
    };
    let Value::Object(obj) = value else {
        return (
            None,
            Err(Reject::bad_message("a message must be a JSON object")),
        );
    };
    let req = match obj.get("req") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.chars().count() <= MAX_ID_CHARS => Some(s.clone()),
        Some(_) => {
            return (
                None,
                Err(Reject::bad_message(
                    "`req` must be a string of at most 64 characters",
                )),
            );
        }
    };
    (req, parse_object(obj))
}

fn field<T: serde::de::DeserializeOwned>(
    obj: &Map<String, Value>,
    name: &str,
) -> Result<T, Reject> {
    let v = obj
        .get(name)
        .ok_or_else(|| Reject::bad_message(format!("missing field `{name}`")))?;
    serde_json::from_value(v.clone())
        .map_err(|e| Reject::bad_message(format!("field `{name}`: {e}")))
}

fn stroke_id(obj: &Map<String, Value>) -> Result<String, Reject> {
    let s: String = field(obj, "stroke")?;
    check_stroke_id(&s)?;
    Ok(s)
}

fn check_stroke_id(s: &str) -> Result<(), Reject> {
    if s.is_empty() || s.chars().count() > MAX_ID_CHARS {
        return Err(Reject::bad_message(
            "`stroke` must be a non-empty string of at most 64 characters",
        ));
    }
    Ok(())
}

fn parse_object(obj: Map<String, Value>) -> Result<ClientMsg, Reject> {
    let ty = match obj.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => return Err(Reject::bad_message("`type` must be a string")),
        None => return Err(Reject::bad_message("missing field `type`")),
    };
    match ty.as_str() {
        "hello" => Ok(ClientMsg::Hello),
        "camera" => {
            let position: [f64; 3] = field(&obj, "position")?;
            let forward: Option<[f64; 3]> = match obj.get("forward") {
                None | Some(Value::Null) => None,
                Some(_) => Some(field(&obj, "forward")?),
            };
            let view_distance: Option<f64> = match obj.get("view_distance") {
                None | Some(Value::Null) => None,
                Some(_) => Some(field(&obj, "view_distance")?),
            };
            Ok(ClientMsg::Camera {
                position,
                forward,
                view_distance,
            })
        }
        "stroke_begin" => {
            let begin: StrokeBegin = serde_json::from_value(Value::Object(obj))
                .map_err(|e| Reject::bad_message(format!("stroke_begin: {e}")))?;
            check_stroke_id(&begin.stroke)?;
            Ok(ClientMsg::StrokeBegin(begin))
        }
        "dab" => Ok(ClientMsg::Dab {
            stroke: stroke_id(&obj)?,
            at: field(&obj, "at")?,
        }),
        "stroke_end" => Ok(ClientMsg::StrokeEnd {
            stroke: stroke_id(&obj)?,
        }),
        "undo" => Ok(ClientMsg::Undo),
        "redo" => Ok(ClientMsg::Redo),
        "new_world" => {
            let nw: NewWorld = serde_json::from_value(Value::Object(obj))
                .map_err(|e| Reject::bad_message(format!("new_world: {e}")))?;
            Ok(ClientMsg::NewWorld(nw))
        }
        other => Err(Reject::bad_message(format!(
            "unknown message type `{other}`"
        ))),
    }
}

/// Checks that `v` is finite and in `lo..=hi`, and gives it as `f32`.
pub(crate) fn ranged(name: &str, v: f64, lo: f64, hi: f64) -> Result<f32, Reject> {
    if !v.is_finite() || v < lo || v > hi {
        return Err(Reject::invalid(format!(
            "{name} must be finite and in {lo}..={hi}, got {v}"
        )));
    }
    Ok(v as f32)
}

/// Checks that every coordinate is finite and within `±limit`.
pub(crate) fn point(name: &str, p: [f64; 3], limit: f64) -> Result<[f32; 3], Reject> {
    let mut out = [0.0f32; 3];
    for (k, v) in p.into_iter().enumerate() {
        out[k] = ranged(name, v, -limit, limit)?;
    }
    Ok(out)
}

/// The `error` message.
pub(crate) fn error_json(req: Option<&str>, stroke: Option<&str>, reject: &Reject) -> String {
    let mut v = json!({
        "type": "error",
        "code": reject.code,
        "message": reject.message,
    });
    if let Some(r) = req {
        v["req"] = json!(r);
    }
    if let Some(s) = stroke {
        v["stroke"] = json!(s);
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_parse() {
        let (req, msg) = parse(r#"{"type":"dab","stroke":"a","at":[1,2,3],"req":"r1"}"#);
        assert_eq!(req.as_deref(), Some("r1"));
        assert_eq!(
            msg,
            Ok(ClientMsg::Dab {
                stroke: "a".into(),
                at: [1.0, 2.0, 3.0]
            })
        );
        let (_, msg) =
            parse(r#"{"type":"stroke_begin","stroke":"s","tool":"dig","radius":4,"strength":1}"#);
        assert!(matches!(msg, Ok(ClientMsg::StrokeBegin(_))));
    }

    #[test]
    fn bad_messages_are_bad_message() {
        for text in [
            "not json",
            "[1,2]",
            r#"{"no_type":1}"#,
            r#"{"type":"fly"}"#,
            r#"{"type":"dab","stroke":"a"}"#,
            r#"{"type":"dab","stroke":"","at":[0,0,0]}"#,
            r#"{"type":"stroke_begin","stroke":"s","tool":"dig","radius":"big","strength":1}"#,
            r#"{"type":"dab","stroke":"a","at":[1,2,3],"req":5}"#,
        ] {
            let (_, msg) = parse(text);
            assert_eq!(msg.map_err(|r| r.code), Err("bad_message"), "{text}");
        }
    }

    #[test]
    fn ranges_reject_non_finite_and_out_of_range() {
        assert!(ranged("radius", f64::NAN, 0.5, 100.0).is_err());
        assert!(ranged("radius", f64::INFINITY, 0.5, 100.0).is_err());
        assert!(ranged("strength", 2.0, 0.0, 1.0).is_err());
        assert_eq!(ranged("strength", 0.5, 0.0, 1.0), Ok(0.5));
        assert!(point("at", [0.0, 1e12, 0.0], 1e9).is_err());
    }
}
