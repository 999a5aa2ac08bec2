//! The beam tree's layout: the last [`WINDOW`] levels, a level a column and its nodes in
//! rows in node order (older levels collapsed into one line above), and where greedy's path
//! runs once beam search pruned it (a row under the tree).

use decoding_engine::decode::beam::{ancestry, BeamNode};

/// Level and row spacing: labels of 14 px (cumulative log p 12 px) stay apart.
pub const COL: f64 = 132.0;
pub const ROW: f64 = 32.0;
/// Left margin of the tree.
pub const LEFT: f64 = 20.0;

/// Levels drawn: older levels are collapsed into one line (their best path is the
/// transcript's start), so the drawing stays the same size however long the search runs.
pub const WINDOW: usize = 10;

/// Where the drawn window's nodes sit, from `origin` (the page's (0, 0); the export's below
/// its title).
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Index in the whole tree of the first node drawn (nodes are in depth order: the
    /// window is the suffix from it).
    pub start: usize,
    /// Depth of the first level drawn (= the levels collapsed above it).
    pub first_depth: usize,
    row_of: Vec<usize>,
    depth_of: Vec<usize>,
    per_depth: Vec<usize>,
    /// Top of the first row: lower when a band says how many levels are not drawn.
    pub top: f64,
    origin: (f64, f64),
}

impl Layout {
    /// The layout of `nodes` (in depth order) searched to `depth`.
    pub fn new(depth: usize, nodes: &[BeamNode], origin: (f64, f64)) -> Layout {
        let first_depth = depth.saturating_sub(WINDOW - 1);
        let start = nodes.partition_point(|n| n.depth < first_depth);
        let shown = &nodes[start..];
        let mut row_of = vec![0usize; shown.len()];
        let mut per_depth: Vec<usize> = Vec::new();
        for (i, n) in shown.iter().enumerate() {
            let d = n.depth - first_depth;
            if per_depth.len() <= d {
                per_depth.resize(d + 1, 0);
            }
            row_of[i] = per_depth[d];
            per_depth[d] += 1;
        }
        Layout {
            start,
            first_depth,
            row_of,
            depth_of: shown.iter().map(|n| n.depth).collect(),
            per_depth,
            top: origin.1 + if first_depth > 0 { 44.0 } else { 20.0 },
            origin,
        }
    }

    /// Nodes drawn.
    pub fn len(&self) -> usize {
        self.row_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.row_of.is_empty()
    }

    /// Rows of the tallest level.
    pub fn rows(&self) -> usize {
        self.per_depth.iter().copied().max().unwrap_or(1)
    }

    /// The column of depth `d`.
    pub fn x_of(&self, d: usize) -> f64 {
        self.origin.0 + LEFT + d.saturating_sub(self.first_depth) as f64 * COL
    }

    /// The point of the `i`th node drawn (the node `start + i` of the tree).
    pub fn pos(&self, i: usize) -> (f64, f64) {
        (
            self.x_of(self.depth_of[i]),
            self.top + self.row_of[i] as f64 * ROW,
        )
    }

    /// The row under the tree where greedy's pruned path runs.
    pub fn greedy_y(&self) -> f64 {
        self.top + 8.0 + self.rows() as f64 * ROW
    }

    /// The drawing's size from its origin, with greedy's row or without.
    pub fn size(&self, greedy_row: bool) -> (f64, f64) {
        let extra = if greedy_row { ROW + 8.0 } else { 0.0 };
        (
            LEFT + 40.0 + self.per_depth.len() as f64 * COL,
            self.top - self.origin.1 + 12.0 + self.rows() as f64 * ROW + extra,
        )
    }
}

/// The nodes on the best beam's path (from its last node up to the root) and on greedy's
/// (from the root down, as far as the tree holds greedy's prefix: once a greedy token is
/// pruned, greedy leaves the tree), by node id.
#[derive(Debug, Clone, PartialEq)]
pub struct Paths {
    pub best: Vec<bool>,
    pub greedy: Vec<bool>,
    /// Greedy's nodes in the tree by depth (the root first), as far as it stays in it.
    pub greedy_ids: Vec<usize>,
}

/// The best beam's and greedy's paths through `all` (the page's tree and the export's).
pub fn paths(best_node: Option<usize>, greedy_tokens: &[u32], all: &[BeamNode]) -> Paths {
    let mut best = vec![false; all.len()];
    for i in best_node.map_or(Vec::new(), |b| ancestry(all, b)) {
        best[i] = true;
    }
    let mut greedy = vec![false; all.len()];
    let mut greedy_ids = Vec::new();
    let mut node = all.first().map(|n| n.id).filter(|&i| i < all.len());
    for &t in greedy_tokens {
        let Some(p) = node else { break };
        greedy[p] = true;
        greedy_ids.push(p);
        node = all
            .iter()
            .find(|n| n.parent == Some(p) && n.token == Some(t))
            .map(|n| n.id)
            .filter(|&i| i < all.len());
    }
    if let Some(p) = node {
        greedy[p] = true;
        greedy_ids.push(p);
    }
    Paths {
        best,
        greedy,
        greedy_ids,
    }
}

/// One of greedy's tokens after beam search pruned it: its point on greedy's row under the
/// tree, and where its edge comes from (greedy's last node in the tree, or the row's
/// previous point; none at the window's left edge).
#[derive(Debug, Clone, PartialEq)]
pub struct OffTree {
    /// The token's position in greedy's text (1 = the first generated).
    pub depth: usize,
    pub at: (f64, f64),
    pub from: Option<(f64, f64)>,
}

impl Layout {
    /// Greedy's tokens off the tree, as far as the search has gone (`depth`), within the
    /// window drawn. Empty while greedy stays in the tree.
    pub fn greedy_off_tree(
        &self,
        paths: &Paths,
        greedy_tokens: usize,
        depth: usize,
    ) -> Vec<OffTree> {
        let in_tree = paths.greedy_ids.len();
        let y = self.greedy_y();
        (in_tree..=greedy_tokens)
            .filter(|&d| d >= 1 && d >= self.first_depth && d <= depth)
            .map(|d| {
                let from = if d == in_tree {
                    paths
                        .greedy_ids
                        .last()
                        .and_then(|&id| id.checked_sub(self.start))
                        .filter(|&i| i < self.len())
                        .map(|i| self.pos(i))
                } else if d > self.first_depth {
                    Some((self.x_of(d - 1), y))
                } else {
                    None
                };
                OffTree {
                    depth: d,
                    at: (self.x_of(d), y),
                    from,
                }
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use decoding_engine::decode::beam::NodeStatus;

    pub(crate) fn node(id: usize, parent: Option<usize>, depth: usize) -> BeamNode {
        BeamNode {
            id,
            parent,
            token: parent.map(|_| id as u32),
            logprob: -1.0,
            cum_logprob: -(depth as f64),
            depth,
            status: NodeStatus::Beam,
        }
    }

    #[test]
    fn levels_are_columns_and_nodes_rows() {
        // The root, two children, three grandchildren.
        let nodes = [
            node(0, None, 0),
            node(1, Some(0), 1),
            node(2, Some(0), 1),
            node(3, Some(1), 2),
            node(4, Some(1), 2),
            node(5, Some(2), 2),
        ];
        let at = Layout::new(2, &nodes, (0.0, 0.0));
        assert_eq!(at.len(), 6);
        assert_eq!(at.pos(0), (20.0, 20.0));
        assert_eq!(at.pos(2), (20.0 + 132.0, 20.0 + 32.0));
        assert_eq!(at.pos(5), (20.0 + 264.0, 20.0 + 64.0));
        assert_eq!(
            at.size(false),
            (20.0 + 40.0 + 3.0 * 132.0, 20.0 + 12.0 + 96.0)
        );
        assert_eq!(at.greedy_y(), 20.0 + 8.0 + 96.0);
        // From an origin: every point moved by it, the size the same.
        let moved = Layout::new(2, &nodes, (5.0, 50.0));
        assert_eq!(moved.pos(5), (5.0 + 284.0, 50.0 + 84.0));
        assert_eq!(
            moved.size(true),
            (at.size(false).0, at.size(false).1 + 40.0)
        );
    }

    #[test]
    fn older_levels_collapse() {
        // A chain 12 deep: levels 0 to 2 collapsed, level 3 in the first column.
        let nodes: Vec<BeamNode> = (0..=12).map(|d| node(d, d.checked_sub(1), d)).collect();
        let at = Layout::new(12, &nodes, (0.0, 0.0));
        assert_eq!((at.first_depth, at.start, at.len()), (3, 3, 10));
        assert_eq!(at.pos(0), (20.0, 44.0));
        assert_eq!(at.x_of(12), 20.0 + 9.0 * 132.0);
    }
}
