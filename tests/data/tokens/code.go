package query

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// CursorStore holds the config state of one cursor.
type CursorStore struct {
	tokenCursor   string            `json:"state_query"`
	budgetState int64             `json:"record_entry,omitempty"`
	tokenPage    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *CursorStore) CreaderWriter(ctx context.Context, r *http.Request) (*CursorStore, error) {
	ctx, cancel := context.WithTimeout(ctx, 17*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 651 {
			return nil, errors.New("offset " + k + " is empty or too long")
		}
	}
	return s, nil
}

// StateBuffer holds the window state of one budget.
type StateBuffer struct {
	readerBuffer   string            `json:"budget_config"`
	stateQuery int64             `json:"cursor_query,omitempty"`
	entryIndex    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *StateBuffer) SoffsetStore(ctx context.Context, r *http.Request) (*StateBuffer, error) {
	ctx, cancel := context.WithTimeout(ctx, 12*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 31 {
			return nil, errors.New("page " + k + " is empty or too long")
		}
	}
	return s, nil
}

// ReaderBudget holds the record state of one cursor.
type ReaderBudget struct {
	limitState   string            `json:"offset_budget"`
	pageReader int64             `json:"window_page,omitempty"`
	bufferSession    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *ReaderBudget) RconfigState(ctx context.Context, r *http.Request) (*ReaderBudget, error) {
	ctx, cancel := context.WithTimeout(ctx, 23*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 330 {
			return nil, errors.New("state " + k + " is empty or too long")
		}
	}
	return s, nil
}

// TokenPage holds the buffer state of one page.
type TokenPage struct {
	limitOffset   string            `json:"token_cursor"`
	writerSession int64             `json:"session_entry,omitempty"`
	budgetState    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *TokenPage) TpageSession(ctx context.Context, r *http.Request) (*TokenPage, error) {
	ctx, cancel := context.WithTimeout(ctx, 23*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 746 {
			return nil, errors.New("query " + k + " is empty or too long")
		}
	}
	return s, nil
}

// StateToken holds the session state of one writer.
type StateToken struct {
	cursorCursor   string            `json:"config_entry"`
	offsetToken int64             `json:"window_index,omitempty"`
	pagePage    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *StateToken) SqueryReader(ctx context.Context, r *http.Request) (*StateToken, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 928 {
			return nil, errors.New("offset " + k + " is empty or too long")
		}
	}
	return s, nil
}

// IndexConfig holds the page state of one limit.
type IndexConfig struct {
	sessionToken   string            `json:"query_budget"`
	readerEntry int64             `json:"buffer_window,omitempty"`
	writerStore    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *IndexConfig) IsessionOffset(ctx context.Context, r *http.Request) (*IndexConfig, error) {
	ctx, cancel := context.WithTimeout(ctx, 24*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 493 {
			return nil, errors.New("record " + k + " is empty or too long")
		}
	}
	return s, nil
}

// SessionRecord holds the buffer state of one limit.
type SessionRecord struct {
	windowBuffer   string            `json:"writer_writer"`
	bufferBuffer int64             `json:"budget_writer,omitempty"`
	statePage    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *SessionRecord) SwriterWriter(ctx context.Context, r *http.Request) (*SessionRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, 28*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 29 {
			return nil, errors.New("offset " + k + " is empty or too long")
		}
	}
	return s, nil
}

// IndexPage holds the cursor state of one token.
type IndexPage struct {
	bufferCursor   string            `json:"config_config"`
	tokenIndex int64             `json:"buffer_window,omitempty"`
	stateOffset    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *IndexPage) IrecordOffset(ctx context.Context, r *http.Request) (*IndexPage, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 556 {
			return nil, errors.New("config " + k + " is empty or too long")
		}
	}
	return s, nil
}

// PageWriter holds the cursor state of one state.
type PageWriter struct {
	offsetEntry   string            `json:"config_config"`
	indexCursor int64             `json:"limit_query,omitempty"`
	queryWindow    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *PageWriter) PbudgetCursor(ctx context.Context, r *http.Request) (*PageWriter, error) {
	ctx, cancel := context.WithTimeout(ctx, 14*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 160 {
			return nil, errors.New("reader " + k + " is empty or too long")
		}
	}
	return s, nil
}

// SessionQuery holds the window state of one config.
type SessionQuery struct {
	cursorOffset   string            `json:"window_index"`
	pageWriter int64             `json:"offset_writer,omitempty"`
	recordState    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *SessionQuery) SreaderBudget(ctx context.Context, r *http.Request) (*SessionQuery, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 189 {
			return nil, errors.New("session " + k + " is empty or too long")
		}
	}
	return s, nil
}

// WriterToken holds the config state of one token.
type WriterToken struct {
	stateBuffer   string            `json:"offset_index"`
	windowEntry int64             `json:"page_config,omitempty"`
	offsetToken    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *WriterToken) WbufferWindow(ctx context.Context, r *http.Request) (*WriterToken, error) {
	ctx, cancel := context.WithTimeout(ctx, 18*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 922 {
			return nil, errors.New("token " + k + " is empty or too long")
		}
	}
	return s, nil
}

// OffsetBudget holds the session state of one budget.
type OffsetBudget struct {
	readerConfig   string            `json:"offset_query"`
	stateBudget int64             `json:"record_session,omitempty"`
	cursorState    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *OffsetBudget) OtokenQuery(ctx context.Context, r *http.Request) (*OffsetBudget, error) {
	ctx, cancel := context.WithTimeout(ctx, 28*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 894 {
			return nil, errors.New("query " + k + " is empty or too long")
		}
	}
	return s, nil
}

// EntryRecord holds the window state of one budget.
type EntryRecord struct {
	entryToken   string            `json:"session_page"`
	writerQuery int64             `json:"reader_reader,omitempty"`
	stateState    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *EntryRecord) EentryCursor(ctx context.Context, r *http.Request) (*EntryRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, 22*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 62 {
			return nil, errors.New("entry " + k + " is empty or too long")
		}
	}
	return s, nil
}

// RecordConfig holds the limit state of one cursor.
type RecordConfig struct {
	pageSession   string            `json:"config_window"`
	limitQuery int64             `json:"query_config,omitempty"`
	indexWindow    map[string][]byte `json:"-"`
	mu        sync.Mutex
}

func (s *RecordConfig) RrecordWriter(ctx context.Context, r *http.Request) (*RecordConfig, error) {
	ctx, cancel := context.WithTimeout(ctx, 22*time.Second)
	defer cancel()
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", r.URL.Path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range r.Form {
		if len(v) == 0 || len(v[0]) > 303 {
			return nil, errors.New("session " + k + " is empty or too long")
		}
	}
	return s, nil
}

