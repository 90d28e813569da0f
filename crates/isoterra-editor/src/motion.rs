//! Camera velocity from successive `camera` messages, for prefetching
//! chunks along the direction of motion.
//!
//! Clients send their camera a few times a second while it moves (and once
//! more when it stops), so the velocity is estimated from the positions and
//! arrival times of those messages: each new sample's velocity (the step
//! over the time since the previous sample) is blended into the estimate
//! with an exponential weight, the speed is capped, a jump far faster than
//! any flight is taken as a teleport (no motion), and a camera that sent
//! nothing for a while, or sent the same position again, is still.

use std::time::{Duration, Instant};

/// Samples closer together than this are not used on their own: the
/// next sample measures its step from the last one used.
const MIN_STEP: Duration = Duration::from_millis(20);
/// A camera that sent no new position for this long is still.
pub(crate) const STILL_AFTER: Duration = Duration::from_millis(600);
/// Time constant of the exponential smoothing, in seconds.
const SMOOTHING_S: f32 = 0.3;
/// Speeds below this many world units per second count as still.
const MIN_SPEED: f32 = 0.5;

/// The motion of one camera.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Motion {
    /// The last sample used: position and arrival time.
    last: Option<([f32; 3], Instant)>,
    /// Time of the latest sample, used or not.
    latest: Option<Instant>,
    /// The smoothed velocity, world units per second.
    velocity: [f32; 3],
}

impl Motion {
    /// Takes the camera position `p` seen at `now` and returns the new
    /// velocity estimate: smoothed, its length capped at `max_speed`, zero
    /// for the first sample, after a pause of [`STILL_AFTER`] or more, and
    /// after a step faster than `teleport_speed` (a jump, not a flight).
    pub fn observe(
        &mut self,
        p: [f32; 3],
        now: Instant,
        max_speed: f32,
        teleport_speed: f32,
    ) -> [f32; 3] {
        self.latest = Some(now);
        let Some((q, then)) = self.last else {
            self.last = Some((p, now));
            self.velocity = [0.0; 3];
            return self.velocity;
        };
        let dt = now.saturating_duration_since(then);
        if dt < MIN_STEP {
            // Too close to the last sample to measure; it stays the
            // reference, so the step is measured over a longer time next.
            return self.velocity;
        }
        self.last = Some((p, now));
        if dt >= STILL_AFTER {
            // It was still until now: the step over the pause says little.
            self.velocity = [0.0; 3];
            return self.velocity;
        }
        let secs = dt.as_secs_f32();
        let raw: [f32; 3] = std::array::from_fn(|a| (p[a] - q[a]) / secs);
        let speed = length(raw);
        if !speed.is_finite() || speed > teleport_speed {
            self.velocity = [0.0; 3];
            return self.velocity;
        }
        let w = 1.0 - (-secs / SMOOTHING_S).exp();
        let mut v: [f32; 3] =
            std::array::from_fn(|a| self.velocity[a] + (raw[a] - self.velocity[a]) * w);
        if speed == 0.0 {
            // A camera sending the same position again has stopped.
            v = [0.0; 3];
        }
        let len = length(v);
        if len < MIN_SPEED {
            v = [0.0; 3];
        } else if len > max_speed {
            v = v.map(|x| x * (max_speed / len));
        }
        self.velocity = v;
        v
    }

    /// The velocity at `now`: zero once the camera sent nothing for
    /// [`STILL_AFTER`].
    pub fn velocity_at(&self, now: Instant) -> [f32; 3] {
        match self.latest {
            Some(t) if now.saturating_duration_since(t) < STILL_AFTER => self.velocity,
            _ => [0.0; 3],
        }
    }
}

fn length(v: [f32; 3]) -> f32 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: f32 = 256.0;
    const JUMP: f32 = 1024.0;

    fn ms(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    /// Feeds a camera moving at `v` units per second, one sample every
    /// `every_ms`, `count` times; returns the last estimate.
    fn fly(m: &mut Motion, t0: Instant, v: [f32; 3], every_ms: u64, count: u64) -> [f32; 3] {
        let mut out = [0.0; 3];
        for k in 0..count {
            let t = k as f32 * every_ms as f32 / 1000.0;
            out = m.observe(v.map(|x| x * t), ms(t0, k * every_ms), MAX, JUMP);
        }
        out
    }

    #[test]
    fn a_steady_flight_converges_to_its_velocity() {
        let t0 = Instant::now();
        let mut m = Motion::default();
        let v = fly(&mut m, t0, [40.0, 0.0, -30.0], 200, 15);
        assert!((v[0] - 40.0).abs() < 0.5, "{v:?}");
        assert!(v[1].abs() < 1e-3, "{v:?}");
        assert!((v[2] + 30.0).abs() < 0.5, "{v:?}");
    }

    #[test]
    fn the_first_sample_and_a_resting_camera_have_no_velocity() {
        let t0 = Instant::now();
        let mut m = Motion::default();
        assert_eq!(m.observe([5.0, 6.0, 7.0], t0, MAX, JUMP), [0.0; 3]);
        // The same position again and again.
        for k in 1..5 {
            assert_eq!(
                m.observe([5.0, 6.0, 7.0], ms(t0, k * 200), MAX, JUMP),
                [0.0; 3]
            );
        }
        // Moving, then the same position again: stopped at once.
        fly(&mut m, ms(t0, 1000), [40.0, 0.0, 0.0], 200, 5);
        let p = m.last.unwrap().0;
        assert!(m.velocity[0] > 10.0);
        let t = m.last.unwrap().1 + Duration::from_millis(200);
        assert_eq!(m.observe(p, t, MAX, JUMP), [0.0; 3]);
    }

    #[test]
    fn the_estimate_is_smoothed() {
        let t0 = Instant::now();
        let mut m = Motion::default();
        m.observe([0.0; 3], t0, MAX, JUMP);
        // One step at 40 u/s gives part of it, not all.
        let v = m.observe([8.0, 0.0, 0.0], ms(t0, 200), MAX, JUMP);
        assert!(v[0] > 5.0 && v[0] < 40.0, "{v:?}");
        // A jitter back does not reverse the direction of a steady flight.
        let mut m = Motion::default();
        fly(&mut m, t0, [40.0, 0.0, 0.0], 200, 10);
        let (p, t) = m.last.unwrap();
        let v = m.observe(
            [p[0] - 2.0, p[1], p[2]],
            t + Duration::from_millis(200),
            MAX,
            JUMP,
        );
        assert!(v[0] > 0.0, "{v:?}");
    }

    #[test]
    fn speeds_are_capped_and_jumps_are_not_flights() {
        let t0 = Instant::now();
        let mut m = Motion::default();
        let v = fly(&mut m, t0, [0.0, 0.0, 600.0], 200, 20);
        let len = length(v);
        assert!((len - MAX).abs() < 1e-3, "{v:?}");
        assert!(v[2] > 0.0);
        // A jump of 10 000 units in 200 ms is a teleport.
        let mut m = Motion::default();
        fly(&mut m, t0, [40.0, 0.0, 0.0], 200, 5);
        let (p, t) = m.last.unwrap();
        let v = m.observe(
            [p[0] + 10_000.0, p[1], p[2]],
            t + Duration::from_millis(200),
            MAX,
            JUMP,
        );
        assert_eq!(v, [0.0; 3]);
    }

    #[test]
    fn a_pause_stops_the_camera() {
        let t0 = Instant::now();
        let mut m = Motion::default();
        let v = fly(&mut m, t0, [40.0, 0.0, 0.0], 200, 10);
        let t = m.last.unwrap().1;
        assert_eq!(m.velocity_at(t + Duration::from_millis(100)), v);
        assert_eq!(m.velocity_at(t + STILL_AFTER), [0.0; 3]);
        // Moving again after the pause starts from rest.
        let p = m.last.unwrap().0;
        let later = t + Duration::from_secs(3);
        assert_eq!(
            m.observe([p[0] + 8.0, p[1], p[2]], later, MAX, JUMP),
            [0.0; 3]
        );
    }

    #[test]
    fn bursts_are_measured_over_a_usable_step() {
        let t0 = Instant::now();
        let mut m = Motion::default();
        m.observe([0.0; 3], t0, MAX, JUMP);
        // Two messages 1 ms apart would read as 1000 u/s; the second one is
        // held back and the step measured from the first.
        assert_eq!(m.observe([1.0, 0.0, 0.0], ms(t0, 1), MAX, JUMP), [0.0; 3]);
        let v = m.observe([8.0, 0.0, 0.0], ms(t0, 200), MAX, JUMP);
        assert!(v[0] > 0.0 && v[0] < 40.0, "{v:?}");
    }
}
