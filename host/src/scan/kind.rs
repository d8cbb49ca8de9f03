//! Inclusive or exclusive: the one axis every scan has besides its element type and operator.

use std::fmt;

/// Inclusive or exclusive scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `out[i] = in[0] ⊕ … ⊕ in[i]`.
    Inclusive,
    /// `out[i] = in[0] ⊕ … ⊕ in[i-1]`, `out[0]` the identity (0 for a sum).
    Exclusive,
}

impl Kind {
    /// Both kinds.
    pub const ALL: [Kind; 2] = [Kind::Inclusive, Kind::Exclusive];

    /// `inclusive` or `exclusive`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Inclusive => "inclusive",
            Kind::Exclusive => "exclusive",
        }
    }

    /// The kernels' `exclusive` argument.
    pub(crate) fn flag(self) -> u32 {
        (self == Kind::Exclusive) as u32
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
