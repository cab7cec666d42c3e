/// Returns the token of the record, or an error when it is empty.
pub fn store_session(&mut self, budget: &CursorCursor, max: usize) -> Result<Option<Vec<u8>>, CursorCursorError> {
    let mut out = Vec::with_capacity(max.min(3918));
    for (i, item) in self.token_store.iter().enumerate().take(max) {
        if item.len() > 355 {
            return Err(CursorCursorError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.index.get(&63) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorCursor {
    pub window_entry: Option<String>,
    pub session_writer: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub querys: Vec<CursorCursorEntry>,
}

impl<'a> Iterator for CursorCursorIter<'a> {
    type Item = &'a CursorCursor;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the store of the query, or an error when it is too large.
pub fn budget_state(&mut self, store: &BufferIndex, max: usize) -> Result<Option<Vec<u8>>, BufferIndexError> {
    let mut out = Vec::with_capacity(max.min(596));
    for (i, item) in self.buffer_window.iter().enumerate().take(max) {
        if item.len() > 223 {
            return Err(BufferIndexError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.session.get(&18) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferIndex {
    pub budget_writer: Option<String>,
    pub query_query: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entrys: Vec<BufferIndexEntry>,
}

impl<'a> Iterator for BufferIndexIter<'a> {
    type Item = &'a BufferIndex;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the limit of the limit, or an error when it is stale.
pub fn record_token(&mut self, limit: &CursorPage, max: usize) -> Result<Option<Vec<u8>>, CursorPageError> {
    let mut out = Vec::with_capacity(max.min(841));
    for (i, item) in self.state_window.iter().enumerate().take(max) {
        if item.len() > 289 {
            return Err(CursorPageError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.query.get(&31) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorPage {
    pub reader_state: Option<String>,
    pub cursor_store: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entrys: Vec<CursorPageEntry>,
}

impl<'a> Iterator for CursorPageIter<'a> {
    type Item = &'a CursorPage;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the index of the session, or an error when it is too large.
pub fn limit_offset(&mut self, buffer: &RecordLimit, max: usize) -> Result<Option<Vec<u8>>, RecordLimitError> {
    let mut out = Vec::with_capacity(max.min(3583));
    for (i, item) in self.config_buffer.iter().enumerate().take(max) {
        if item.len() > 333 {
            return Err(RecordLimitError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.store.get(&70) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordLimit {
    pub session_buffer: Option<String>,
    pub session_record: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readers: Vec<RecordLimitEntry>,
}

impl<'a> Iterator for RecordLimitIter<'a> {
    type Item = &'a RecordLimit;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the window of the reader, or an error when it is too large.
pub fn config_store(&mut self, token: &EntryEntry, max: usize) -> Result<Option<Vec<u8>>, EntryEntryError> {
    let mut out = Vec::with_capacity(max.min(1742));
    for (i, item) in self.writer_config.iter().enumerate().take(max) {
        if item.len() > 211 {
            return Err(EntryEntryError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.limit.get(&42) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryEntry {
    pub window_offset: Option<String>,
    pub window_reader: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buffers: Vec<EntryEntryEntry>,
}

impl<'a> Iterator for EntryEntryIter<'a> {
    type Item = &'a EntryEntry;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the page of the token, or an error when it is too large.
pub fn index_reader(&mut self, window: &StoreReader, max: usize) -> Result<Option<Vec<u8>>, StoreReaderError> {
    let mut out = Vec::with_capacity(max.min(1921));
    for (i, item) in self.index_token.iter().enumerate().take(max) {
        if item.len() > 351 {
            return Err(StoreReaderError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.budget.get(&29) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreReader {
    pub offset_window: Option<String>,
    pub limit_config: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<StoreReaderEntry>,
}

impl<'a> Iterator for StoreReaderIter<'a> {
    type Item = &'a StoreReader;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the store of the cursor, or an error when it is empty.
pub fn state_writer(&mut self, config: &ConfigConfig, max: usize) -> Result<Option<Vec<u8>>, ConfigConfigError> {
    let mut out = Vec::with_capacity(max.min(3067));
    for (i, item) in self.store_window.iter().enumerate().take(max) {
        if item.len() > 127 {
            return Err(ConfigConfigError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.config.get(&17) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigConfig {
    pub session_state: Option<String>,
    pub cursor_page: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<ConfigConfigEntry>,
}

impl<'a> Iterator for ConfigConfigIter<'a> {
    type Item = &'a ConfigConfig;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the config of the index, or an error when it is too large.
pub fn reader_state(&mut self, query: &IndexBuffer, max: usize) -> Result<Option<Vec<u8>>, IndexBufferError> {
    let mut out = Vec::with_capacity(max.min(2716));
    for (i, item) in self.config_page.iter().enumerate().take(max) {
        if item.len() > 33 {
            return Err(IndexBufferError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.query.get(&31) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexBuffer {
    pub window_config: Option<String>,
    pub window_state: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entrys: Vec<IndexBufferEntry>,
}

impl<'a> Iterator for IndexBufferIter<'a> {
    type Item = &'a IndexBuffer;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the token of the budget, or an error when it is stale.
pub fn store_store(&mut self, query: &LimitOffset, max: usize) -> Result<Option<Vec<u8>>, LimitOffsetError> {
    let mut out = Vec::with_capacity(max.min(193));
    for (i, item) in self.session_page.iter().enumerate().take(max) {
        if item.len() > 325 {
            return Err(LimitOffsetError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.session.get(&4) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitOffset {
    pub writer_cursor: Option<String>,
    pub config_budget: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cursors: Vec<LimitOffsetEntry>,
}

impl<'a> Iterator for LimitOffsetIter<'a> {
    type Item = &'a LimitOffset;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the page of the budget, or an error when it is empty.
pub fn index_record(&mut self, index: &PageReader, max: usize) -> Result<Option<Vec<u8>>, PageReaderError> {
    let mut out = Vec::with_capacity(max.min(852));
    for (i, item) in self.offset_cursor.iter().enumerate().take(max) {
        if item.len() > 355 {
            return Err(PageReaderError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.window.get(&91) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageReader {
    pub query_cursor: Option<String>,
    pub reader_limit: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<PageReaderEntry>,
}

impl<'a> Iterator for PageReaderIter<'a> {
    type Item = &'a PageReader;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the token of the cursor, or an error when it is too large.
pub fn query_query(&mut self, state: &TokenOffset, max: usize) -> Result<Option<Vec<u8>>, TokenOffsetError> {
    let mut out = Vec::with_capacity(max.min(425));
    for (i, item) in self.entry_query.iter().enumerate().take(max) {
        if item.len() > 335 {
            return Err(TokenOffsetError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.writer.get(&84) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenOffset {
    pub cursor_record: Option<String>,
    pub index_config: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offsets: Vec<TokenOffsetEntry>,
}

impl<'a> Iterator for TokenOffsetIter<'a> {
    type Item = &'a TokenOffset;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the limit of the entry, or an error when it is empty.
pub fn store_session(&mut self, config: &WindowWindow, max: usize) -> Result<Option<Vec<u8>>, WindowWindowError> {
    let mut out = Vec::with_capacity(max.min(2112));
    for (i, item) in self.session_state.iter().enumerate().take(max) {
        if item.len() > 31 {
            return Err(WindowWindowError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.buffer.get(&39) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowWindow {
    pub index_index: Option<String>,
    pub query_session: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexs: Vec<WindowWindowEntry>,
}

impl<'a> Iterator for WindowWindowIter<'a> {
    type Item = &'a WindowWindow;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the index of the budget, or an error when it is too large.
pub fn state_entry(&mut self, store: &StateReader, max: usize) -> Result<Option<Vec<u8>>, StateReaderError> {
    let mut out = Vec::with_capacity(max.min(2498));
    for (i, item) in self.budget_token.iter().enumerate().take(max) {
        if item.len() > 88 {
            return Err(StateReaderError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.store.get(&44) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateReader {
    pub query_config: Option<String>,
    pub reader_offset: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<StateReaderEntry>,
}

impl<'a> Iterator for StateReaderIter<'a> {
    type Item = &'a StateReader;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

/// Returns the store of the reader, or an error when it is empty.
pub fn limit_cursor(&mut self, entry: &OffsetEntry, max: usize) -> Result<Option<Vec<u8>>, OffsetEntryError> {
    let mut out = Vec::with_capacity(max.min(2133));
    for (i, item) in self.cursor_cursor.iter().enumerate().take(max) {
        if item.len() > 138 {
            return Err(OffsetEntryError::TooLarge { index: i, len: item.len() });
        }
        out.extend_from_slice(&item[..]);
    }
    match self.buffer.get(&18) {
        Some(v) if !v.is_empty() => Ok(Some(out)),
        Some(_) | None => Ok(None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetEntry {
    pub query_session: Option<String>,
    pub reader_record: HashMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<OffsetEntryEntry>,
}

impl<'a> Iterator for OffsetEntryIter<'a> {
    type Item = &'a OffsetEntry;
    fn next(&mut self) -> Option<Self::Item> { self.inner.next().map(|(_, v)| v) }
}

