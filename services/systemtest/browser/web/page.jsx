// The test page: a chat with useChat and XbotChatTransport, through the
// backend-for-frontend at /api. The chat id (the session), the agent and how
// messages are submitted come from the query:
// /?chat=<platformSessionId>&agent=<agentId>&submit=session|runs. The driver
// (drive.mjs) reads the DOM: #status is useChat's status, each message a
// .message with data-role and data-id (the run id of a reply), each part a
// .text or a .tool with data-state, and a tool waiting for approval has an
// .approve button.
import { useChat } from '@ai-sdk/react';
import { useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { XbotChatTransport } from './transport.js';

const query = new URLSearchParams(location.search);
const chatId = query.get('chat') ?? 'chat';
const transport = new XbotChatTransport({ api: '/api', agentId: query.get('agent') ?? 'demo', submit: query.get('submit') ?? 'session' });

function Part({ message, part }) {
  const [deciding, setDeciding] = useState(false);
  if (part.type === 'text') return <p className="text">{part.text}</p>;
  if (part.type !== 'dynamic-tool' && !part.type.startsWith('tool-')) return null;
  const approve = async () => {
    setDeciding(true);
    await transport.approve(message.id, part.approval.id);
  };
  return (
    <div className="tool" data-state={part.state}>
      <code>{part.toolName} {JSON.stringify(part.input)}</code> <em>{part.state}</em>
      {part.state === 'approval-requested' && (
        <button className="approve" disabled={deciding} onClick={approve}>Approve</button>
      )}
    </div>
  );
}

function Chat() {
  const { messages, sendMessage, status, error } = useChat({ id: chatId, transport, resume: true });
  const [input, setInput] = useState('');
  const submit = (e) => {
    e.preventDefault();
    sendMessage({ text: input });
    setInput('');
  };
  const list = useMemo(() => messages.map((m) => (
    <div key={m.id} className="message" data-role={m.role} data-id={m.id}>
      <b>{m.role}</b>
      {m.parts.map((p, i) => <Part key={i} message={m} part={p} />)}
    </div>
  )), [messages]);
  return (
    <main>
      <h1>xbot chat <small id="status">{status}</small></h1>
      {error && <pre id="error">{String(error)}</pre>}
      {list}
      <form onSubmit={submit}>
        <input id="prompt" value={input} onChange={(e) => setInput(e.target.value)} placeholder="Say something" />
        <button id="send" type="submit" disabled={status !== 'ready' || !input}>Send</button>
      </form>
    </main>
  );
}

createRoot(document.getElementById('root')).render(<Chat />);
