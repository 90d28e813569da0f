//! The `baked` table of a world file: [`WorldFile`]'s methods that store,
//! list and read baked rows ([`BakedRow`]) and hash their contents.
//!
//! Only rows and payload bytes are handled here (the payload codec is
//! [`decode_baked`](crate::decode_baked)); what goes into a baked chunk is decided elsewhere.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::OptionalExtension;

use super::WorldFile;
use crate::baked::decode_row;
use crate::hash::{BakedHasher, stored_content_hash};
use crate::{BakedChunk, BakedRow, ChunkKey, ChunkLayer, StoreError};

impl WorldFile {
    /// Stores baked rows (inserting or replacing), in one transaction. Baked
    /// rows are derived data: the write does not count as a change of the
    /// world (other handles' writes are not refused afterwards), and it
    /// leaves the stroke log alone.
    ///
    /// # Errors
    ///
    /// [`StoreError::ReadOnly`] / [`StoreError::Busy`] when the file cannot
    /// be written now; nothing is written then.
    pub fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError> {
        self.ensure_baked_table()?;
        let path = self.path().to_path_buf();
        let sql = |e| StoreError::sqlite(&path, e);
        let tx = self
            .connection_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql)?;
        {
            let mut put = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO baked (layer, x, y, z, lod, source, hash, payload)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(sql)?;
            for r in rows {
                let k = &r.key;
                put.execute((
                    k.layer.0, k.x, k.y, k.z, k.lod, &r.source, &r.hash, &r.payload,
                ))
                .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// The stored row of `key`, if any.
    pub fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError> {
        if !self.has_baked_table()? {
            return Ok(None);
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        self.connection()
            .prepare_cached(
                "SELECT source, hash, payload FROM baked
                 WHERE layer = ?1 AND x = ?2 AND y = ?3 AND z = ?4 AND lod = ?5",
            )
            .and_then(|mut s| {
                s.query_row((key.layer.0, key.x, key.y, key.z, key.lod), |r| {
                    Ok(BakedRow {
                        key: *key,
                        source: r.get(0)?,
                        hash: r.get(1)?,
                        payload: r.get(2)?,
                    })
                })
                .optional()
            })
            .map_err(sql)
    }

    /// The decoded baked chunk of `key`, if stored.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] when the payload does not decode or its
    /// content hash differs from the recorded one.
    pub fn baked(&self, key: &ChunkKey) -> Result<Option<BakedChunk>, StoreError> {
        let Some(row) = self.baked_row(key)? else {
            return Ok(None);
        };
        let (chunk, _) = decode_row(self.path(), &row)?;
        Ok(Some(chunk))
    }

    /// The number of baked rows.
    pub fn baked_count(&self) -> Result<u64, StoreError> {
        if !self.has_baked_table()? {
            return Ok(0);
        }
        let n: i64 = self
            .connection()
            .query_row("SELECT COUNT(*) FROM baked", [], |r| r.get(0))
            .map_err(|e| StoreError::sqlite(self.path(), e))?;
        Ok(n as u64)
    }

    /// The keys of the baked rows recorded with stamp `source`, ascending.
    pub fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError> {
        let mut out = BTreeSet::new();
        if !self.has_baked_table()? {
            return Ok(out);
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        let mut stmt = self
            .connection()
            .prepare("SELECT layer, x, y, z, lod FROM baked WHERE source = ?1")
            .map_err(sql)?;
        let rows = stmt
            .query_map([source], |r| {
                Ok(ChunkKey {
                    layer: ChunkLayer(r.get(0)?),
                    x: r.get(1)?,
                    y: r.get(2)?,
                    z: r.get(3)?,
                    lod: r.get(4)?,
                })
            })
            .map_err(sql)?;
        for k in rows {
            out.insert(k.map_err(sql)?);
        }
        Ok(out)
    }

    /// The key and recorded source of every baked row, in ascending key
    /// order (no payloads are read).
    pub fn baked_sources(&self) -> Result<BTreeMap<ChunkKey, String>, StoreError> {
        let mut out = BTreeMap::new();
        if !self.has_baked_table()? {
            return Ok(out);
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        let mut stmt = self
            .connection()
            .prepare("SELECT layer, x, y, z, lod, source FROM baked")
            .map_err(sql)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    ChunkKey {
                        layer: ChunkLayer(r.get(0)?),
                        x: r.get(1)?,
                        y: r.get(2)?,
                        z: r.get(3)?,
                        lod: r.get(4)?,
                    },
                    r.get::<_, String>(5)?,
                ))
            })
            .map_err(sql)?;
        for row in rows {
            let (k, source) = row.map_err(sql)?;
            out.insert(k, source);
        }
        Ok(out)
    }

    /// At most `limit` keys of baked rows that come after `after` (all when
    /// `None`), in ascending [`ChunkKey`] order: a listing in pages, for
    /// walking a large table without holding it in memory.
    pub fn baked_keys_after(
        &self,
        after: Option<&ChunkKey>,
        limit: usize,
    ) -> Result<Vec<ChunkKey>, StoreError> {
        let mut out = Vec::new();
        if limit == 0 || !self.has_baked_table()? {
            return Ok(out);
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let key = |r: &rusqlite::Row<'_>| {
            Ok(ChunkKey {
                layer: ChunkLayer(r.get(0)?),
                x: r.get(1)?,
                y: r.get(2)?,
                z: r.get(3)?,
                lod: r.get(4)?,
            })
        };
        let conn = self.connection();
        let rows = match after {
            None => {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT layer, x, y, z, lod FROM baked
                         ORDER BY layer, x, y, z, lod LIMIT ?1",
                    )
                    .map_err(sql)?;
                stmt.query_map([limit], key)
                    .and_then(|r| r.collect::<rusqlite::Result<Vec<_>>>())
            }
            Some(k) => {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT layer, x, y, z, lod FROM baked
                         WHERE (layer, x, y, z, lod) > (?1, ?2, ?3, ?4, ?5)
                         ORDER BY layer, x, y, z, lod LIMIT ?6",
                    )
                    .map_err(sql)?;
                stmt.query_map((k.layer.0, k.x, k.y, k.z, k.lod, limit), key)
                    .and_then(|r| r.collect::<rusqlite::Result<Vec<_>>>())
            }
        };
        out.extend(rows.map_err(sql)?);
        Ok(out)
    }

    /// `(key, content hash)` of every baked row, in ascending key order.
    pub fn baked_hashes(&self) -> Result<Vec<(ChunkKey, String)>, StoreError> {
        let mut out = Vec::new();
        self.for_each_baked(|row| {
            out.push((row.key, row.hash));
            Ok(())
        })?;
        Ok(out)
    }

    /// Calls `f` with every baked row in ascending key order (one payload
    /// held at a time). Stops at the first error.
    pub fn for_each_baked(
        &self,
        mut f: impl FnMut(BakedRow) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        if !self.has_baked_table()? {
            return Ok(());
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        let mut stmt = self
            .connection()
            .prepare(
                "SELECT layer, x, y, z, lod, source, hash, payload FROM baked
                 ORDER BY layer, x, y, z, lod",
            )
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let row = BakedRow {
                key: ChunkKey {
                    layer: ChunkLayer(r.get(0).map_err(sql)?),
                    x: r.get(1).map_err(sql)?,
                    y: r.get(2).map_err(sql)?,
                    z: r.get(3).map_err(sql)?,
                    lod: r.get(4).map_err(sql)?,
                },
                source: r.get(5).map_err(sql)?,
                hash: r.get(6).map_err(sql)?,
                payload: r.get(7).map_err(sql)?,
            };
            f(row)?;
        }
        Ok(())
    }

    /// A content hash of the baked rows: 16 hex digits of FNV-1a 64 over
    /// every row's key and the content hash of its decoded payload, in key
    /// order — so it depends on what is stored, not on the order rows were
    /// written, the thread count of the bake or the compressor. `None` when
    /// nothing is baked.
    ///
    /// Every payload is decoded and checked against its recorded hash.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a payload that does not decode or does
    /// not match its recorded hash.
    pub fn baked_content_hash(&self) -> Result<Option<String>, StoreError> {
        let mut h = BakedHasher::new();
        let path = self.path().to_path_buf();
        self.for_each_baked(|row| {
            let (_, hash) = decode_row(&path, &row)?;
            h.row(&row.key, &hash);
            Ok(())
        })?;
        Ok(h.finish())
    }

    /// The content hash of the world and its baked chunks: `world_hash` (a
    /// document's `content_hash`, which covers the generator and every
    /// edited chunk) when nothing is baked, otherwise 16 hex digits of
    /// FNV-1a 64 over `world_hash` and [`baked_content_hash`](Self::baked_content_hash).
    ///
    /// # Errors
    ///
    /// As [`baked_content_hash`](Self::baked_content_hash).
    pub fn stored_content_hash(&self, world_hash: &str) -> Result<String, StoreError> {
        Ok(match self.baked_content_hash()? {
            None => world_hash.to_string(),
            Some(baked) => stored_content_hash(world_hash, &baked),
        })
    }
}
