//! One connection's outgoing queue: bounded, and coalescing mesh frames.
//!
//! The world thread pushes; the connection's writer task pops and writes to
//! the socket as fast as the client reads. A client that stops reading must
//! not make the server hold everything sent meanwhile:
//!
//! - a mesh frame replaces a frame of the same chunk and layer that is still
//!   queued (the client keeps only the newest mesh of a chunk anyway); the
//!   newer frame takes the end of the queue, so it stays behind every message
//!   that was queued before it;
//! - when the queued bytes pass the limit all the same (a stream of new
//!   chunks that a stalled client never takes) and the client took nothing
//!   for a while, or pass four times the limit, the queue is dropped and the
//!   client is closed with 1008 "too far behind": the page reconnects and
//!   gets a fresh welcome and the current meshes. A burst (the whole world
//!   for a new client) into a queue that a client keeps taking from is not
//!   "behind".

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::frame::parse_frame_header;
use crate::state::Out;

/// The close code sent to a client that fell too far behind.
pub(crate) const BEHIND_CLOSE_CODE: u16 = 1008;
/// Over the limit, a client that took nothing for this long is behind.
const STALLED_AFTER: Duration = Duration::from_secs(2);
/// Over this many times the limit, a client is behind however it reads.
const HARD_FACTOR: usize = 4;

/// (kind, layer, chunk) of a mesh frame.
type FrameKey = (u8, u8, [i32; 3]);

/// A connection's outgoing queue (see the module documentation).
pub(crate) struct Outbox {
    state: Mutex<State>,
    ready: Notify,
    /// Told once the client fell too far behind.
    behind: Notify,
    limit: usize,
}

#[derive(Default)]
struct State {
    /// Queued messages; `None` where a newer frame replaced one.
    queue: VecDeque<Option<Queued>>,
    /// Sequence number of `queue[0]`.
    front: u64,
    /// The queued frame of each chunk layer, by sequence number.
    frames: HashMap<FrameKey, u64>,
    bytes: usize,
    /// Since when the oldest queued message waits for the writer: the last
    /// take, or the push into an empty queue.
    waiting_since: Option<Instant>,
    /// No more messages are taken: the connection is closing, or closed
    /// for falling behind.
    closed: bool,
    /// Closed for falling too far behind.
    behind: bool,
}

struct Queued {
    out: Out,
    key: Option<FrameKey>,
}

fn size_of(out: &Out) -> usize {
    match out {
        Out::Text(s) => s.len(),
        Out::Binary(b) => b.len(),
        Out::Close(_, r) => r.len(),
    }
}

impl Outbox {
    /// A queue that holds at most `limit` bytes of messages.
    pub(crate) fn new(limit: usize) -> Self {
        Outbox {
            state: Mutex::new(State::default()),
            ready: Notify::new(),
            behind: Notify::new(),
            limit,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `out`. False when the connection is closed (or was just
    /// closed for falling too far behind): the message is dropped.
    pub(crate) fn push(&self, out: Out) -> bool {
        let mut s = self.lock();
        if s.closed {
            return false;
        }
        let key = match &out {
            Out::Binary(b) => parse_frame_header(b).map(|h| (h.kind, h.layer, h.chunk)),
            _ => None,
        };
        if let Some(k) = key
            && let Some(old) = s.frames.remove(&k)
        {
            let at = (old - s.front) as usize;
            if let Some(q) = s.queue.get_mut(at).and_then(Option::take) {
                s.bytes -= size_of(&q.out);
            }
        }
        let closing = matches!(out, Out::Close(..));
        s.bytes += size_of(&out);
        let now = Instant::now();
        let since = *s.waiting_since.get_or_insert(now);
        let behind = s.bytes > self.limit.saturating_mul(HARD_FACTOR)
            || (s.bytes > self.limit && now.duration_since(since) >= STALLED_AFTER);
        if behind && !closing {
            s.queue.clear();
            s.frames.clear();
            s.front = 0;
            let close = Out::Close(
                BEHIND_CLOSE_CODE,
                "too far behind: reconnect to get the current world".into(),
            );
            s.bytes = size_of(&close);
            s.queue.push_back(Some(Queued {
                out: close,
                key: None,
            }));
            s.closed = true;
            s.behind = true;
            drop(s);
            self.ready.notify_one();
            self.behind.notify_waiters();
            return false;
        }
        let seq = s.front + s.queue.len() as u64;
        if let Some(k) = key {
            s.frames.insert(k, seq);
        }
        s.queue.push_back(Some(Queued { out, key }));
        if closing {
            s.closed = true;
        }
        drop(s);
        self.ready.notify_one();
        true
    }

    /// Takes no more messages; what is queued is still written.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }

    /// The bytes queued now.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.lock().bytes
    }

    fn pop(&self) -> Option<Out> {
        let mut s = self.lock();
        s.waiting_since = (!s.queue.is_empty()).then(Instant::now);
        while let Some(q) = s.queue.pop_front() {
            s.front += 1;
            if let Some(q) = q {
                if let Some(k) = q.key
                    && s.frames.get(&k) == Some(&(s.front - 1))
                {
                    s.frames.remove(&k);
                }
                s.bytes -= size_of(&q.out);
                return Some(q.out);
            }
        }
        None
    }

    /// Resolves once the client was closed for falling too far behind
    /// (a write to it that waits on the client can stop then).
    pub(crate) async fn fell_behind(&self) {
        loop {
            // Registered before the check, so a notification in between counts.
            let told = self.behind.notified();
            if self.lock().behind {
                return;
            }
            told.await;
        }
    }

    /// The next message to write; `None` once closed and empty.
    pub(crate) async fn next(&self) -> Option<Out> {
        loop {
            if let Some(out) = self.pop() {
                return Some(out);
            }
            if self.lock().closed {
                return None;
            }
            // A push between the check and here left a permit.
            self.ready.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::encode_frame;
    use axum::body::Bytes;

    fn frame(chunk: [i32; 3], layer: u8, n: usize) -> Out {
        let pos = vec![[0.0f32; 3]; n];
        Out::Binary(Bytes::from(encode_frame(
            0,
            layer,
            0,
            chunk,
            &pos,
            &[],
            &[],
            &[],
        )))
    }

    fn drain(o: &Outbox) -> Vec<Out> {
        std::iter::from_fn(|| o.pop()).collect()
    }

    #[test]
    fn a_newer_frame_of_a_chunk_replaces_the_queued_one_and_goes_last() {
        let o = Outbox::new(1 << 20);
        assert!(o.push(frame([0, 0, 0], 0, 1)));
        assert!(o.push(Out::Text("a".into())));
        assert!(o.push(frame([0, 0, 0], 1, 1)));
        assert!(o.push(frame([1, 0, 0], 0, 1)));
        assert!(o.push(frame([0, 0, 0], 0, 3)));
        let got = drain(&o);
        assert_eq!(got.len(), 4);
        assert!(matches!(&got[0], Out::Text(t) if t == "a"));
        match &got[3] {
            Out::Binary(b) => {
                let h = parse_frame_header(b).unwrap();
                assert_eq!((h.chunk, h.layer, h.vertices), ([0, 0, 0], 0, 3));
            }
            _ => panic!("the newest frame comes last"),
        }
        assert_eq!(o.queued_bytes(), 0);
        // Once written, a frame of the same chunk is queued again.
        assert!(o.push(frame([0, 0, 0], 0, 1)));
        assert_eq!(drain(&o).len(), 1);
    }

    #[test]
    fn passing_the_limit_drops_the_queue_and_closes() {
        let o = Outbox::new(1024);
        let mut k = 0;
        while o.push(frame([k, 0, 0], 0, 20)) {
            k += 1;
            assert!(o.queued_bytes() <= 1024 * HARD_FACTOR);
        }
        assert!(k > 1);
        assert!(!o.push(Out::Text("late".into())), "closed");
        let got = drain(&o);
        assert!(matches!(&got[..], [Out::Close(BEHIND_CLOSE_CODE, _)]));
        assert_eq!(o.queued_bytes(), 0);
    }

    #[test]
    fn a_burst_into_a_queue_that_is_taken_from_is_not_behind() {
        let o = Outbox::new(1024);
        // Over the limit but under the hard limit, and fresh: kept.
        for k in 0..5 {
            assert!(o.push(frame([k, 0, 0], 0, 20)));
        }
        assert!(o.queued_bytes() > 1024);
        // Taken from: still fine.
        assert!(o.pop().is_some());
        assert!(o.push(frame([9, 0, 0], 0, 20)));
        // Nothing taken for a while: the next push over the limit gives up.
        o.lock().waiting_since = Some(Instant::now() - STALLED_AFTER);
        assert!(!o.push(frame([10, 0, 0], 0, 20)));
    }
}
