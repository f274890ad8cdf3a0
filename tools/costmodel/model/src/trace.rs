// SPDX-License-Identifier: GPL-2.0
//! A boot's events as the model was fed them (the plugin's `record=FILE`),
//! so that `costmodel-replay` can feed the same model again without QEMU:
//! to time the model alone, and to prove that a faster model counts
//! exactly what the slower one did.
//!
//! The file: one text line, `# costmodel trace v1 vcpus=N args=A,B,...`
//! (the plugin's arguments), then fixed records of six little-endian u64:
//! word 0 holds the kind (bits 0-7), the vCPU (8-15), the kind code of a
//! memory access (16-31) and its flags (32-39); the others depend on the
//! kind (see `Rec::words`).

use crate::decode::{pack_rep, unpack_rep};
use crate::feed::MemOp;
use crate::order::Event;
use std::io::{self, BufRead, Read, Write};

/// One thing the model was told, in the order it was told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rec {
    /// `Order::push` of an event of a vCPU.
    Event(usize, Event),
    /// `Order::pause`: the vCPU ran a `pause`.
    Pause(usize),
    /// A mark: every queued event modeled, the counts read.
    Mark,
}

const WORDS: usize = 6;
const BLOCK: u64 = 1;
const MEM: u64 = 2;
const REP: u64 = 3;
const HALT: u64 = 4;
const PAUSE: u64 = 5;
const MARK: u64 = 6;
const STORE: u64 = 1;
const IO: u64 = 2;
const DECIDES: u64 = 4;
const VALUE: u64 = 8;

impl Rec {
    fn words(&self) -> [u64; WORDS] {
        let head = |kind: u64, cpu: usize| kind | (cpu as u64) << 8;
        match *self {
            Rec::Event(cpu, Event::Block(n)) => [head(BLOCK, cpu), n, 0, 0, 0, 0],
            Rec::Event(cpu, Event::Mem { op, count, to_end }) => {
                let flags = [
                    (op.store, STORE),
                    (op.io, IO),
                    (op.decides, DECIDES),
                    (op.value.is_some(), VALUE),
                ]
                .iter()
                .filter(|(on, _)| *on)
                .fold(0, |f, (_, bit)| f | bit);
                [
                    head(MEM, cpu) | (op.code & 0xffff) << 16 | flags << 32,
                    op.vaddr,
                    op.paddr,
                    op.size,
                    op.value.unwrap_or(0),
                    count | to_end << 48,
                ]
            }
            Rec::Event(cpu, Event::Rep { pc, op, count }) => {
                [head(REP, cpu), pack_rep(pc, op), count, 0, 0, 0]
            }
            Rec::Event(cpu, Event::Halt) => [head(HALT, cpu), 0, 0, 0, 0, 0],
            Rec::Pause(cpu) => [head(PAUSE, cpu), 0, 0, 0, 0, 0],
            Rec::Mark => [MARK, 0, 0, 0, 0, 0],
        }
    }

    fn from_words(w: [u64; WORDS]) -> io::Result<Rec> {
        let cpu = ((w[0] >> 8) & 0xff) as usize;
        Ok(match w[0] & 0xff {
            BLOCK => Rec::Event(cpu, Event::Block(w[1])),
            MEM => {
                let flags = w[0] >> 32;
                let op = MemOp {
                    code: (w[0] >> 16) & 0xffff,
                    vaddr: w[1],
                    paddr: w[2],
                    size: w[3],
                    store: flags & STORE != 0,
                    io: flags & IO != 0,
                    decides: flags & DECIDES != 0,
                    value: (flags & VALUE != 0).then_some(w[4]),
                    insn: 0,
                };
                let (count, to_end) = (w[5] & ((1 << 48) - 1), w[5] >> 48);
                Rec::Event(cpu, Event::Mem { op, count, to_end })
            }
            REP => {
                let (pc, op) = unpack_rep(w[1]);
                Rec::Event(
                    cpu,
                    Event::Rep {
                        pc,
                        op,
                        count: w[2],
                    },
                )
            }
            HALT => Rec::Event(cpu, Event::Halt),
            PAUSE => Rec::Pause(cpu),
            MARK => Rec::Mark,
            k => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("trace: unknown record kind {k}"),
                ))
            }
        })
    }

    /// Appends the record to `w`.
    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        let mut b = [0u8; WORDS * 8];
        for (i, x) in self.words().iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&x.to_le_bytes());
        }
        w.write_all(&b)
    }

    /// The next record of `r`, or None at its end.
    pub fn read(r: &mut impl Read) -> io::Result<Option<Rec>> {
        let mut b = [0u8; WORDS * 8];
        match r.read_exact(&mut b) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let mut w = [0u64; WORDS];
        for (i, x) in w.iter_mut().enumerate() {
            *x = u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        }
        Rec::from_words(w).map(Some)
    }
}

/// The header line of a trace of a boot with `vcpus` vCPUs and the
/// plugin's arguments `args`.
pub fn header(vcpus: usize, args: &[String]) -> String {
    format!(
        "# costmodel trace v1 vcpus={vcpus} args={}\n",
        args.join(",")
    )
}

/// Reads a trace's header line: its vCPUs and the plugin's arguments.
pub fn read_header(r: &mut impl BufRead) -> io::Result<(usize, Vec<String>)> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "trace: not a costmodel trace v1",
        )
    };
    let rest = line
        .trim_end()
        .strip_prefix("# costmodel trace v1 vcpus=")
        .ok_or_else(bad)?;
    let (n, args) = rest.split_once(" args=").ok_or_else(bad)?;
    let vcpus = n.parse().map_err(|_| bad())?;
    Ok((vcpus, args.split(',').map(str::to_string).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::StrOp;

    #[test]
    fn every_kind_reads_back_as_written() {
        let op = MemOp {
            code: 0x1234,
            vaddr: 0xffff_8880_0000_1008,
            paddr: 0x1008,
            size: 8,
            store: false,
            io: false,
            decides: true,
            value: Some(0xffff_8880_0000_2000),
            insn: 0,
        };
        let recs = [
            Rec::Event(3, Event::Block(17)),
            Rec::Event(
                1,
                Event::Mem {
                    op,
                    count: 123_456_789,
                    to_end: 5,
                },
            ),
            Rec::Event(
                0,
                Event::Mem {
                    op: MemOp {
                        store: true,
                        io: true,
                        value: None,
                        decides: false,
                        ..op
                    },
                    count: 1,
                    to_end: 1,
                },
            ),
            Rec::Event(
                2,
                Event::Rep {
                    pc: 0xffff_ffff_8100_0000,
                    op: StrOp::Stos,
                    count: 99,
                },
            ),
            Rec::Event(63, Event::Halt),
            Rec::Pause(7),
            Rec::Mark,
        ];
        let mut buf = header(4, &["out=/x".into(), "core=224:10:56:16".into()]).into_bytes();
        for r in &recs {
            r.write(&mut buf).unwrap();
        }
        let mut rd = io::BufReader::new(&buf[..]);
        assert_eq!(
            read_header(&mut rd).unwrap(),
            (
                4,
                vec!["out=/x".to_string(), "core=224:10:56:16".to_string()]
            )
        );
        for r in &recs {
            assert_eq!(Rec::read(&mut rd).unwrap(), Some(*r));
        }
        assert_eq!(Rec::read(&mut rd).unwrap(), None);
    }

    #[test]
    fn a_file_that_is_no_trace_is_refused() {
        let mut rd = io::BufReader::new(&b"# costmodel counts v4 vcpus=2\n"[..]);
        assert!(read_header(&mut rd).is_err());
        let mut bad = Vec::new();
        bad.extend_from_slice(&[9u8; 48]);
        assert!(Rec::read(&mut &bad[..]).is_err());
    }
}
