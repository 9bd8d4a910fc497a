package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// The handler chain, outermost first:
//
//	cancelHandler   $/cancelRequest with numeric or string ids (library defect 2)
//	orderedHandler  one goroutine per message, started in arrival order; a
//	                handler may release the queue early for slow work; panics
//	                are recovered and answered with InternalError
//	server.route    lifecycle, 3.17 and agent-ls/* methods with typed
//	                decoding, then protocol.ServerHandler for the rest

// cancelHandler tracks in-flight calls and cancels them on $/cancelRequest,
// whose id may be a number or a string.
func cancelHandler(next jsonrpc2.Handler, log *slog.Logger) jsonrpc2.Handler {
	var mu sync.Mutex
	// inflight holds each call's cancel and whether $/cancelRequest used it.
	type flight struct {
		cancel    context.CancelFunc
		requested *atomic.Bool
	}
	inflight := map[jsonrpc2.ID]flight{}
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if req.Method() == protocol.MethodCancelRequest {
			id, err := decodeCancelID(req.Params())
			if err != nil {
				log.Warn("bad $/cancelRequest", "err", err)
				return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, err.Error()))
			}
			mu.Lock()
			f, ok := inflight[id]
			mu.Unlock()
			if ok {
				f.requested.Store(true)
				f.cancel()
			}
			return reply(ctx, nil, nil)
		}
		call, ok := req.(*jsonrpc2.Call)
		if !ok {
			return next(ctx, reply, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		id := call.ID()
		requested := &atomic.Bool{}
		mu.Lock()
		inflight[id] = flight{cancel: cancel, requested: requested}
		mu.Unlock()
		inner := reply
		reply = func(rctx context.Context, result any, err error) error {
			mu.Lock()
			delete(inflight, id)
			mu.Unlock()
			// Only the client's $/cancelRequest turns an answer into
			// RequestCancelled: a result computed before the connection's
			// context ended (stdin closed right after shutdown and exit) is
			// still sent.
			if requested.Load() && ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
				result, err = nil, protocol.ErrRequestCancelled
			}
			cancel()
			// Write with a context that the cancellation does not stop.
			return inner(context.WithoutCancel(rctx), result, err)
		}
		return next(ctx, reply, req)
	}
}

// decodeCancelID reads $/cancelRequest's id: an integer or a string.
func decodeCancelID(params json.RawMessage) (jsonrpc2.ID, error) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return jsonrpc2.ID{}, fmt.Errorf("$/cancelRequest params: %w", err)
	}
	var v any
	if err := json.Unmarshal(p.ID, &v); err != nil {
		return jsonrpc2.ID{}, fmt.Errorf("$/cancelRequest id: %w", err)
	}
	switch id := v.(type) {
	case float64:
		if id != math.Trunc(id) || id < math.MinInt32 || id > math.MaxInt32 {
			return jsonrpc2.ID{}, fmt.Errorf("$/cancelRequest id %v is not a 32-bit integer", id)
		}
		return jsonrpc2.NewNumberID(int32(id)), nil
	case string:
		return jsonrpc2.NewStringID(id), nil
	}
	return jsonrpc2.ID{}, fmt.Errorf("$/cancelRequest id %s: want a number or a string", p.ID)
}

type releaseKey struct{}

// releaseQueue lets a handler's request stop holding up the messages after
// it: call it before slow work (store access, rendering) that does not
// depend on later messages. It is a no-op outside orderedHandler.
func releaseQueue(ctx context.Context) {
	if f, ok := ctx.Value(releaseKey{}).(func()); ok {
		f()
	}
}

// orderedHandler runs each message in its own goroutine; a message starts
// once the one before it has replied, returned or released the queue, so
// didOpen/didChange/hover keep their order while slow work need not block.
// A panic is recovered, logged and answered with InternalError; a request
// that returns without replying is answered with InternalError too. idle
// sees each message start and end.
func orderedHandler(next jsonrpc2.Handler, log *slog.Logger, wg *sync.WaitGroup, idle *idleWatch) jsonrpc2.Handler {
	prev := make(chan struct{})
	close(prev)
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		wait := prev
		done := make(chan struct{})
		prev = done
		var once sync.Once
		release := func() { once.Do(func() { close(done) }) }
		var replied atomic.Bool
		r := func(rctx context.Context, result any, err error) error {
			if !replied.CompareAndSwap(false, true) {
				log.Error("second reply dropped", "method", req.Method())
				return nil
			}
			release()
			return reply(rctx, result, err)
		}
		ctx = context.WithValue(ctx, releaseKey{}, release)
		wg.Add(1)
		idle.begin()
		go func() {
			defer wg.Done()
			defer idle.end()
			defer release()
			<-wait
			defer func() {
				if p := recover(); p != nil {
					log.Error("handler panic", "method", req.Method(), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					_ = r(ctx, nil, jsonrpc2.NewError(jsonrpc2.InternalError, fmt.Sprintf("internal error in %s: %v", req.Method(), p)))
				}
			}()
			if err := next(ctx, r, req); err != nil && !errors.Is(err, context.Canceled) {
				log.Warn("handler", "method", req.Method(), "err", err)
			}
			if _, isCall := req.(*jsonrpc2.Call); isCall && !replied.Load() {
				log.Error("handler returned without a reply", "method", req.Method())
				_ = r(ctx, nil, jsonrpc2.NewError(jsonrpc2.InternalError, req.Method()+" produced no reply"))
			}
		}()
		return nil
	}
}

// invalidParams is the error for params that do not decode.
func invalidParams(method string, err error) error {
	return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s: invalid params: %v", method, err))
}

// decodeParams decodes params strictly enough to reject the wrong shape.
func decodeParams(method string, raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return invalidParams(method, errors.New("params are required"))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalidParams(method, err)
	}
	return nil
}

// encodedResult is a reply result its handler has already encoded as JSON
// from its own values. encodedReplies writes it into the response as is:
// jsonrpc2.NewResponse would parse and re-compact every byte of it, most of
// the time of a large reply such as the outline of a 2,000-line file.
type encodedResult []byte

// encodedReplies sits between the connection and the other handlers: a
// call answered with an encodedResult (and no error) is written straight
// to st; every other reply goes to the library's replier. The library's
// replier does nothing else than encode and write, so nothing is skipped.
func encodedReplies(st *stream, next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		call, ok := req.(*jsonrpc2.Call)
		if !ok {
			return next(ctx, reply, req)
		}
		return next(ctx, func(rctx context.Context, result any, err error) error {
			data, ok := result.(encodedResult)
			if !ok {
				return reply(rctx, result, err)
			}
			if err != nil {
				return reply(rctx, nil, err)
			}
			if err := rctx.Err(); err != nil {
				return err
			}
			if err := st.writeResult(call.ID(), data); err != nil {
				return fmt.Errorf("write to stream: %w", err)
			}
			return nil
		}, req)
	}
}
