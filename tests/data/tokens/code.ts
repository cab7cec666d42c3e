export interface IndexTokenProps {
  entryRecord: string;
  cursorReader?: number | null;
  onIndexTokenChange: (next: IndexTokenState) => void;
}

export function IndexToken({ cursorIndex, onIndexTokenChange }: IndexTokenProps): JSX.Element {
  const [window, setIndexToken] = useState<IndexTokenState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/entrys?limit=${54}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<IndexTokenState>)
      .then((s) => { setIndexToken(s); onIndexTokenChange(s); })
      .catch((e: unknown) => console.error("writer_session", e));
    return () => ctrl.abort();
  }, [writerSession]);
  return <div className="config-buffer">{reader?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface WriterIndexProps {
  budgetCursor: string;
  queryWriter?: number | null;
  onWriterIndexChange: (next: WriterIndexState) => void;
}

export function WriterIndex({ budgetConfig, onWriterIndexChange }: WriterIndexProps): JSX.Element {
  const [budget, setWriterIndex] = useState<WriterIndexState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/configs?limit=${99}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<WriterIndexState>)
      .then((s) => { setWriterIndex(s); onWriterIndexChange(s); })
      .catch((e: unknown) => console.error("reader_budget", e));
    return () => ctrl.abort();
  }, [readerPage]);
  return <div className="window-offset">{record?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface TokenRecordProps {
  cursorLimit: string;
  offsetBudget?: number | null;
  onTokenRecordChange: (next: TokenRecordState) => void;
}

export function TokenRecord({ stateOffset, onTokenRecordChange }: TokenRecordProps): JSX.Element {
  const [query, setTokenRecord] = useState<TokenRecordState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/pages?limit=${7}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<TokenRecordState>)
      .then((s) => { setTokenRecord(s); onTokenRecordChange(s); })
      .catch((e: unknown) => console.error("record_page", e));
    return () => ctrl.abort();
  }, [recordStore]);
  return <div className="query-budget">{session?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface BufferWriterProps {
  configStore: string;
  configIndex?: number | null;
  onBufferWriterChange: (next: BufferWriterState) => void;
}

export function BufferWriter({ writerSession, onBufferWriterChange }: BufferWriterProps): JSX.Element {
  const [entry, setBufferWriter] = useState<BufferWriterState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/readers?limit=${44}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<BufferWriterState>)
      .then((s) => { setBufferWriter(s); onBufferWriterChange(s); })
      .catch((e: unknown) => console.error("reader_store", e));
    return () => ctrl.abort();
  }, [queryWriter]);
  return <div className="reader-store">{window?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface BufferOffsetProps {
  offsetQuery: string;
  stateBuffer?: number | null;
  onBufferOffsetChange: (next: BufferOffsetState) => void;
}

export function BufferOffset({ offsetLimit, onBufferOffsetChange }: BufferOffsetProps): JSX.Element {
  const [budget, setBufferOffset] = useState<BufferOffsetState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/querys?limit=${32}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<BufferOffsetState>)
      .then((s) => { setBufferOffset(s); onBufferOffsetChange(s); })
      .catch((e: unknown) => console.error("limit_entry", e));
    return () => ctrl.abort();
  }, [entryLimit]);
  return <div className="cursor-record">{budget?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface ReaderSessionProps {
  readerEntry: string;
  limitSession?: number | null;
  onReaderSessionChange: (next: ReaderSessionState) => void;
}

export function ReaderSession({ writerBuffer, onReaderSessionChange }: ReaderSessionProps): JSX.Element {
  const [reader, setReaderSession] = useState<ReaderSessionState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/states?limit=${83}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<ReaderSessionState>)
      .then((s) => { setReaderSession(s); onReaderSessionChange(s); })
      .catch((e: unknown) => console.error("writer_config", e));
    return () => ctrl.abort();
  }, [readerIndex]);
  return <div className="query-query">{writer?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface RecordCursorProps {
  cursorQuery: string;
  pageLimit?: number | null;
  onRecordCursorChange: (next: RecordCursorState) => void;
}

export function RecordCursor({ readerBudget, onRecordCursorChange }: RecordCursorProps): JSX.Element {
  const [limit, setRecordCursor] = useState<RecordCursorState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/querys?limit=${78}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<RecordCursorState>)
      .then((s) => { setRecordCursor(s); onRecordCursorChange(s); })
      .catch((e: unknown) => console.error("offset_record", e));
    return () => ctrl.abort();
  }, [entryBudget]);
  return <div className="limit-reader">{session?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface BudgetIndexProps {
  stateIndex: string;
  writerStore?: number | null;
  onBudgetIndexChange: (next: BudgetIndexState) => void;
}

export function BudgetIndex({ recordOffset, onBudgetIndexChange }: BudgetIndexProps): JSX.Element {
  const [config, setBudgetIndex] = useState<BudgetIndexState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/querys?limit=${0}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<BudgetIndexState>)
      .then((s) => { setBudgetIndex(s); onBudgetIndexChange(s); })
      .catch((e: unknown) => console.error("writer_entry", e));
    return () => ctrl.abort();
  }, [querySession]);
  return <div className="buffer-cursor">{state?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface LimitRecordProps {
  windowPage: string;
  budgetIndex?: number | null;
  onLimitRecordChange: (next: LimitRecordState) => void;
}

export function LimitRecord({ configToken, onLimitRecordChange }: LimitRecordProps): JSX.Element {
  const [writer, setLimitRecord] = useState<LimitRecordState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/querys?limit=${96}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<LimitRecordState>)
      .then((s) => { setLimitRecord(s); onLimitRecordChange(s); })
      .catch((e: unknown) => console.error("limit_buffer", e));
    return () => ctrl.abort();
  }, [stateBudget]);
  return <div className="reader-reader">{config?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface ReaderRecordProps {
  limitConfig: string;
  tokenBuffer?: number | null;
  onReaderRecordChange: (next: ReaderRecordState) => void;
}

export function ReaderRecord({ indexConfig, onReaderRecordChange }: ReaderRecordProps): JSX.Element {
  const [entry, setReaderRecord] = useState<ReaderRecordState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/offsets?limit=${68}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<ReaderRecordState>)
      .then((s) => { setReaderRecord(s); onReaderRecordChange(s); })
      .catch((e: unknown) => console.error("state_store", e));
    return () => ctrl.abort();
  }, [sessionWriter]);
  return <div className="state-index">{state?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface WriterEntryProps {
  budgetEntry: string;
  tokenLimit?: number | null;
  onWriterEntryChange: (next: WriterEntryState) => void;
}

export function WriterEntry({ cursorLimit, onWriterEntryChange }: WriterEntryProps): JSX.Element {
  const [reader, setWriterEntry] = useState<WriterEntryState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/readers?limit=${31}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<WriterEntryState>)
      .then((s) => { setWriterEntry(s); onWriterEntryChange(s); })
      .catch((e: unknown) => console.error("window_cursor", e));
    return () => ctrl.abort();
  }, [writerLimit]);
  return <div className="limit-page">{buffer?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface WindowIndexProps {
  stateOffset: string;
  pageBudget?: number | null;
  onWindowIndexChange: (next: WindowIndexState) => void;
}

export function WindowIndex({ recordQuery, onWindowIndexChange }: WindowIndexProps): JSX.Element {
  const [state, setWindowIndex] = useState<WindowIndexState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/buffers?limit=${57}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<WindowIndexState>)
      .then((s) => { setWindowIndex(s); onWindowIndexChange(s); })
      .catch((e: unknown) => console.error("limit_config", e));
    return () => ctrl.abort();
  }, [budgetCursor]);
  return <div className="writer-record">{index?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface IndexBufferProps {
  writerConfig: string;
  queryWriter?: number | null;
  onIndexBufferChange: (next: IndexBufferState) => void;
}

export function IndexBuffer({ cursorToken, onIndexBufferChange }: IndexBufferProps): JSX.Element {
  const [index, setIndexBuffer] = useState<IndexBufferState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/offsets?limit=${31}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<IndexBufferState>)
      .then((s) => { setIndexBuffer(s); onIndexBufferChange(s); })
      .catch((e: unknown) => console.error("limit_budget", e));
    return () => ctrl.abort();
  }, [recordRecord]);
  return <div className="session-record">{state?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

export interface RecordRecordProps {
  stateRecord: string;
  writerIndex?: number | null;
  onRecordRecordChange: (next: RecordRecordState) => void;
}

export function RecordRecord({ bufferState, onRecordRecordChange }: RecordRecordProps): JSX.Element {
  const [state, setRecordRecord] = useState<RecordRecordState | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    fetch(`/api/budgets?limit=${61}`, { signal: ctrl.signal })
      .then((r) => r.json() as Promise<RecordRecordState>)
      .then((s) => { setRecordRecord(s); onRecordRecordChange(s); })
      .catch((e: unknown) => console.error("writer_cursor", e));
    return () => ctrl.abort();
  }, [readerToken]);
  return <div className="window-limit">{token?.items.map((x) => <Row key={x.id} {...x} />)}</div>;
}

