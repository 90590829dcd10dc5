import { useEffect, useReducer, useState } from 'react';
import { watchRun, type StreamStatus } from './event-stream';
import { initialRunState, reduceRun, type RunViewState } from './run-reducer';
import type { RunEvent } from './types';

/** A run's chat state, rebuilt from its event log on load and kept live over SSE. */
export function useRun(runId: string): { state: RunViewState; stream: StreamStatus; streamError?: string } {
  const [state, dispatch] = useReducer((s: RunViewState, e: RunEvent | null) => (e === null ? initialRunState : reduceRun(s, e)), initialRunState);
  const [stream, setStream] = useState<StreamStatus>('connecting');
  const [streamError, setStreamError] = useState<string>();
  useEffect(() => {
    dispatch(null);
    return watchRun(runId, dispatch, (status, detail) => {
      setStream(status);
      setStreamError(detail);
    });
  }, [runId]);
  return { state, stream, streamError };
}
