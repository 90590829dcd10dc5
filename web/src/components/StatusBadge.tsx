/** A status pill; `label` when the words differ from the status key (e.g. "waiting for approval"). */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return (
    <span className={`badge badge-${status}`} data-status={status}>
      {label ?? status.replace('_', ' ')}
    </span>
  );
}
