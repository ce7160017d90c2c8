import type { Dispatch, StateUpdater } from 'preact/hooks';
import { ago, exact } from '../kit/format';
import { RowButton, TableHead } from '../kit/table';

/** A post of GET /channels/:id/posts: its counts as WhatsApp keeps them, the gateway's id if it sent it. */
export interface PostStats {
  messageId?: string;
  serverId: string;
  views: number;
  reactions: Record<string, number>;
  postedAt?: string;
}

type PostEdit = { messageId: string; text: string } | undefined;

/**
 * A channel's latest posts (channel-panel.tsx): each one's text when the gateway sent it (its
 * message record), when it was posted, its views and reactions as WhatsApp counts them; the owner
 * edits one in place or deletes it.
 */
export function PostTable(props: {
  posts: PostStats[];
  texts: Record<string, string>;
  owner: boolean;
  busy: boolean;
  editPost: PostEdit;
  setEditPost: Dispatch<StateUpdater<PostEdit>>;
  onSaveEdit: (e: Event) => void;
  onDelete: (p: PostStats) => void;
}) {
  const { texts, owner, busy, editPost, setEditPost } = props;
  return (
    <table class="table responsive post-table" data-testid="channel-posts">
      <TableHead columns={['Post', 'Posted', { label: 'Views', class: 'num' }, 'Reactions']} actions scope />
      <tbody>
        {props.posts.map((p) => (
          <tr key={p.serverId} data-testid={`post-${p.serverId}`}>
            <td data-label="Post" class="post-content">
              {editPost && editPost.messageId === p.messageId ? (
                <form onSubmit={props.onSaveEdit}>
                  <label>
                    New text
                    <textarea
                      rows={2}
                      dir="auto"
                      value={editPost.text}
                      onInput={(e) => setEditPost({ ...editPost, text: e.currentTarget.value })}
                    />
                  </label>
                  <div class="actions">
                    <button
                      type="submit"
                      class="primary small-button"
                      disabled={busy || !editPost.text.trim()}
                    >
                      Save
                    </button>
                    <RowButton kind="secondary" onClick={() => setEditPost(undefined)}>
                      Cancel
                    </RowButton>
                  </div>
                </form>
              ) : (
                <span dir="auto">
                  {p.messageId ? (texts[p.messageId] ?? '…') : <span class="muted">#{p.serverId}</span>}
                </span>
              )}
            </td>
            <td data-label="Posted" title={exact(p.postedAt)}>
              {ago(p.postedAt)}
            </td>
            <td data-label="Views" class="num">
              {p.views}
            </td>
            <td data-label="Reactions">
              {Object.keys(p.reactions).length === 0
                ? '—'
                : Object.entries(p.reactions)
                    .map(([emoji, n]) => `${emoji} ${n}`)
                    .join('  ')}
            </td>
            <td class="row-actions">
              {owner && p.messageId && !editPost && (
                <>
                  <RowButton
                    kind="secondary"
                    label="Edit post"
                    onClick={() => setEditPost({ messageId: p.messageId!, text: texts[p.messageId!] ?? '' })}
                  >
                    Edit
                  </RowButton>
                  <RowButton
                    kind="danger-outline"
                    disabled={busy}
                    label="Delete post"
                    onClick={() => props.onDelete(p)}
                  >
                    Delete
                  </RowButton>
                </>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
