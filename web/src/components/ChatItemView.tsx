import type { ChatItem } from '../run-reducer';
import { ToolCardView } from './ToolCardView';

export function ChatItemView({ item }: { item: ChatItem }) {
  switch (item.kind) {
    case 'user':
      return <li className="msg msg-user">{item.text}</li>;
    case 'assistant':
      return (
        <li className={`msg msg-assistant${item.streaming ? ' streaming' : ''}`} data-testid="assistant-text">
          {item.text}
        </li>
      );
    case 'tool':
      return <ToolCardView card={item} />;
    case 'notice':
      return <li className={`notice notice-${item.tone}`}>{item.text}</li>;
  }
}
