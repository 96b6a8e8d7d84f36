//! Table tests for [`parse`] and the cut-off helpers.

use super::*;
