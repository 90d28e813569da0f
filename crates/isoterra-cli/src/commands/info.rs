//! `isoterra info`

use crate::args::InfoArgs;
use crate::commands::doc::Doc;

pub fn run(a: &InfoArgs) -> anyhow::Result<()> {
    let doc = Doc::open(&a.file)?;
    let hash = if a.hash {
        Some(super::bake::stored_hash(&doc)?)
    } else {
        None
    };
    if let Doc::Map(d) = &doc {
        return super::map::info(d, a, hash);
    }
    let info = doc.info_json()?;
    if a.json {
        let mut value = info;
        if let Some(hash) = hash {
            value["hash"] = serde_json::Value::String(hash);
        }
        println!("{}", serde_json::to_string(&value)?);
        return Ok(());
    }
    println!("{:<14} {}", "file:", a.file.display());
    if let serde_json::Value::Object(map) = &info {
        for (k, v) in map {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            println!("{:<14} {v}", format!("{}:", k.replace('_', " ")));
        }
    }
    if let Some(hash) = hash {
        println!("{hash}");
    }
    Ok(())
}
