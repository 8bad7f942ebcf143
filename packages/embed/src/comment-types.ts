/** The shapes of the embed comments routes (reference 8.C, docs/api/dashboard-comments.md). */
export interface CommentDto {
  id: number;
  dashboardId: string;
  body: string;
  createdAt: string;
  isOwn: boolean;
  editedAt: string | null;
  removedAt: string | null;
  userId: number;
}

export interface ThreadDto {
  root: CommentDto;
  replies: CommentDto[];
  resolvedAt: string | null;
  resolvedBy: number | null;
  lastActivityAt: string;
}

export interface PageInfo {
  endCursor: string | null;
  hasNextPage: boolean;
}

export interface MentionableUser {
  id: number;
  username: string;
  email: string | null;
  firstName: string | null;
}
